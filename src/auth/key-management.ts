import type { Db } from "../db/database.js";
import { ApiError, errors } from "../http/errors.js";
import type { KeyCache } from "./key-cache.js";
import {
  countActiveKeys,
  findAccountKey,
  listAccountKeys,
  lockAccountForKeys,
  revokeAccountKey,
  type ListedKey,
} from "./key-list-repository.js";
import { createApiKey } from "./service.js";

/** Most active (not revoked) keys of one account. */
export const MAX_ACTIVE_KEYS = 25;

export function listKeys(db: Db, accountId: number): Promise<ListedKey[]> {
  return listAccountKeys(db, accountId);
}

/**
 * Creates a key with a name (trimmed; 1-100 characters): the key in clear is returned this once,
 * only its hash is stored. 409 `api_key_limit` past 25 active keys (creations of one account are
 * serialised on its row, so two at once cannot both pass the count).
 */
export async function createNamedKey(
  db: Db,
  accountId: number,
  rawName: string,
): Promise<{ key: ListedKey; apiKey: string }> {
  const name = rawName.trim();
  if (name.length === 0 || name.length > 100) {
    throw errors.validation("Invalid request: body.name: must be 1-100 characters after trimming.", [
      { path: ["body", "name"], message: "must be 1-100 characters after trimming" },
    ]);
  }
  return db.transaction().execute(async (trx) => {
    await lockAccountForKeys(trx, accountId);
    if ((await countActiveKeys(trx, accountId)) >= MAX_ACTIVE_KEYS) {
      throw new ApiError(
        409,
        "api_key_limit",
        `The account already has ${MAX_ACTIVE_KEYS} active API keys: revoke one first.`,
      );
    }
    const { keyId, apiKey } = await createApiKey(trx, accountId, name);
    const key = await findAccountKey(trx, accountId, keyId);
    if (!key) throw new Error("the key just created is not found");
    return { key, apiKey };
  });
}

/**
 * Revokes one of the account's keys (idempotent) and answers it; 404 for a key of another account
 * or none. The calling process's key cache forgets the account's keys at once, the others hear it
 * through the trigger's notification.
 */
export async function revokeKeyById(
  db: Db,
  accountId: number,
  id: number,
  cache?: KeyCache,
): Promise<ListedKey> {
  if (!(await revokeAccountKey(db, accountId, id))) throw errors.notFound("API key not found.");
  cache?.invalidateAccount(accountId);
  const key = await findAccountKey(db, accountId, id);
  if (!key) throw errors.notFound("API key not found.");
  return key;
}
