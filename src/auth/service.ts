import type { DbOrTrx } from "../db/database.js";
import type { KeyCaller } from "../http/contract.js";
import { errors } from "../http/errors.js";
import { generateApiKey, hashApiKey, looksLikeApiKey, visiblePrefix } from "./api-keys.js";
import type { KeyCache } from "./key-cache.js";
import { findKeyByHash, insertApiKey, revokeKeyByHash } from "./repository.js";

const PAID_STATUSES = new Set(["active", "trialing"]);

/**
 * Resolves a bearer token to its account. Missing or unknown key: 401; revoked key: 401 saying so;
 * an account without an active or trialing paid plan: 403. With a `cache`, a key seen recently is
 * not read from Postgres again (the cache is told at once of revocations and plan changes).
 */
export async function authenticate(
  db: DbOrTrx,
  token: string | undefined,
  cache?: KeyCache,
): Promise<KeyCaller> {
  if (!token || !looksLikeApiKey(token)) throw errors.unauthorized();
  const keyHash = hashApiKey(token);
  const key = cache
    ? await cache.lookup(keyHash, (hash) => findKeyByHash(db, hash))
    : await findKeyByHash(db, keyHash);
  if (!key) throw errors.unauthorized("The API key is not valid.");
  if (key.revokedAt) throw errors.unauthorized("This API key has been revoked.");
  if (!key.plan || !PAID_STATUSES.has(key.subscriptionStatus)) throw errors.forbidden();
  return {
    accountId: key.accountId,
    keyId: key.keyId,
    keyPrefix: key.keyPrefix,
    keyName: key.keyName,
    channel: "api",
  };
}

/** Creates a key for an account; the clear key is returned once and never stored. */
export async function createApiKey(
  db: DbOrTrx,
  accountId: number,
  name: string,
): Promise<{ keyId: number; apiKey: string }> {
  const apiKey = generateApiKey();
  const keyId = await insertApiKey(db, {
    accountId,
    name,
    keyPrefix: visiblePrefix(apiKey),
    keyHash: hashApiKey(apiKey),
  });
  return { keyId, apiKey };
}

/**
 * Revokes a key given in clear (idempotent); its id, or undefined for an unknown key. `cache`,
 * the key cache of the calling process if it has one, forgets the account's keys at once, so the
 * caller's very next request is refused; every other process hears it within milliseconds through
 * the trigger's notification (migration 0600), as does this one when it has no cache to pass.
 */
export async function revokeKey(db: DbOrTrx, apiKey: string, cache?: KeyCache): Promise<number | undefined> {
  const revoked = await revokeKeyByHash(db, hashApiKey(apiKey));
  if (revoked) cache?.invalidateAccount(revoked.accountId);
  return revoked?.keyId;
}

/** Reads the bearer token of an Authorization header. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}
