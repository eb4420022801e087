import { createHmac, timingSafeEqual } from "node:crypto";

/** How long a direct download link works. */
export const LINK_LIFETIME_MS = 15 * 60 * 1000;

/** What a valid token grants: one entry of one account, until `expiresAt`. */
export interface LinkClaim {
  entryId: number;
  accountId: number;
  expiresAt: Date;
}

const TOKEN = /^(\d{1,10})\.(\d{1,10})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

function signature(secret: string, entryId: number, accountId: number, expiresSeconds: number): Buffer {
  return createHmac("sha256", secret)
    .update(`export-file:${entryId}:${accountId}:${expiresSeconds}`)
    .digest();
}

/**
 * A token `<entryId>.<accountId>.<expiry unix seconds>.<HMAC-SHA256, base64url>`, signed with the
 * deployment's signing secret; the ids are not secret, the signature makes them unforgeable.
 */
export function signFileToken(secret: string, claim: LinkClaim): string {
  const expires = Math.floor(claim.expiresAt.getTime() / 1000);
  const sig = signature(secret, claim.entryId, claim.accountId, expires).toString("base64url");
  return `${claim.entryId}.${claim.accountId}.${expires}.${sig}`;
}

/**
 * The claim of a token whose signature is valid (compared in constant time), expired or not;
 * undefined for a malformed or forged token.
 */
export function verifyFileToken(secret: string, token: string): LinkClaim | undefined {
  const match = TOKEN.exec(token);
  if (!match) return undefined;
  const [, entry, account, expires, sig] = match as unknown as [string, string, string, string, string];
  const expected = signature(secret, Number(entry), Number(account), Number(expires));
  const given = Buffer.from(sig, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  return { entryId: Number(entry), accountId: Number(account), expiresAt: new Date(Number(expires) * 1000) };
}
