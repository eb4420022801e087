import type { DbOrTrx } from "../db/database.js";

/** An API key with what authentication needs to know of its account. */
export interface KeyRecord {
  keyId: number;
  keyName: string;
  keyPrefix: string;
  revokedAt: Date | null;
  accountId: number;
  plan: string | null;
  subscriptionStatus: string;
}

/** Finds a key by its hash, with its account's subscription. */
export async function findKeyByHash(db: DbOrTrx, keyHash: string): Promise<KeyRecord | undefined> {
  const row = await db
    .selectFrom("api_keys")
    .innerJoin("accounts", "accounts.id", "api_keys.account_id")
    .select([
      "api_keys.id as keyId",
      "api_keys.name as keyName",
      "api_keys.key_prefix as keyPrefix",
      "api_keys.revoked_at as revokedAt",
      "accounts.id as accountId",
      "accounts.plan as plan",
      "accounts.subscription_status as subscriptionStatus",
    ])
    .where("api_keys.key_hash", "=", keyHash)
    .executeTakeFirst();
  return row;
}

/** Stores a new key (hash only) and returns its id. */
export async function insertApiKey(
  db: DbOrTrx,
  key: { accountId: number; name: string; keyPrefix: string; keyHash: string },
): Promise<number> {
  const row = await db
    .insertInto("api_keys")
    .values({ account_id: key.accountId, name: key.name, key_prefix: key.keyPrefix, key_hash: key.keyHash })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Marks a key revoked (idempotent); returns its id, or undefined for an unknown key. */
export async function revokeKeyByHash(db: DbOrTrx, keyHash: string): Promise<number | undefined> {
  const row = await db
    .updateTable("api_keys")
    .set((eb) => ({ revoked_at: eb.fn.coalesce("revoked_at", eb.fn<Date>("now", [])) }))
    .where("key_hash", "=", keyHash)
    .returning("id")
    .executeTakeFirst();
  return row?.id;
}
