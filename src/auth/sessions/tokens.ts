import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** A new random token (256 bits, base64url): sign-in links and session cookies. */
export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/** The stored form of a token: long random secrets, so SHA-256 is enough and indexable. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/**
 * A session's CSRF token: an HMAC of its stored hash with the deployment's signing secret, so it
 * needs no storage and is the same for the whole session (a page reload reads it again with
 * `GET /auth/session`), while nobody without the secret can derive it from the cookie.
 */
export function csrfTokenFor(signingSecret: string, sessionHash: string): string {
  return createHmac("sha256", signingSecret).update(`dashboard-csrf:${sessionHash}`).digest("base64url");
}

/** Whether `sent` is the session's CSRF token (constant time). */
export function csrfMatches(signingSecret: string, sessionHash: string, sent: string | undefined): boolean {
  if (typeof sent !== "string") return false;
  const expected = Buffer.from(csrfTokenFor(signingSecret, sessionHash));
  const given = Buffer.from(sent);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
