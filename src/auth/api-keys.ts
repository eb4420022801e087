import { createHash, randomBytes } from "node:crypto";

export const KEY_PREFIX = "svck_";
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const SECRET_LENGTH = 40;
/** How many leading characters of a key are kept in clear to recognise it (`svck_` + 8). */
export const VISIBLE_PREFIX_LENGTH = KEY_PREFIX.length + 8;

/** A new random API key: `svck_` followed by 40 base62 characters (about 238 bits). */
export function generateApiKey(): string {
  const bytes = randomBytes(SECRET_LENGTH * 2);
  let secret = "";
  for (const byte of bytes) {
    if (byte >= 248) continue; // 248 = 62 * 4: keeps the choice uniform
    secret += ALPHABET[byte % 62];
    if (secret.length === SECRET_LENGTH) break;
  }
  if (secret.length < SECRET_LENGTH) return generateApiKey();
  return KEY_PREFIX + secret;
}

/**
 * The stored form of a key. Keys are long random secrets, so a fast SHA-256 is enough (no
 * dictionary to guess from) and lets the key be found by an index lookup.
 */
export function hashApiKey(apiKey: string): string {
  return createHash("sha256").update(apiKey).digest("hex");
}

/** The part of a key shown back to people (in lists and in `createdVia`). */
export function visiblePrefix(apiKey: string): string {
  return apiKey.slice(0, VISIBLE_PREFIX_LENGTH);
}

/** Whether a string has the shape of one of our keys (cheap check before touching the database). */
export function looksLikeApiKey(value: string): boolean {
  return (
    value.startsWith(KEY_PREFIX) &&
    value.length === KEY_PREFIX.length + SECRET_LENGTH &&
    /^[A-Za-z0-9_]+$/.test(value)
  );
}
