import type { CompiledQuery, SelectQueryBuilder } from "kysely";
import { prepared, type Db, type DbOrTrx } from "../db/database.js";

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

function keyByHashQuery(db: Db, keyHash: string) {
  return db
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
    .where("api_keys.key_hash", "=", keyHash);
}

type KeyRow = ReturnType<typeof keyByHashQuery> extends SelectQueryBuilder<never, never, infer O> ? O : never;

/** Run on every cache miss of authentication: built once, then a named prepared statement. */
let compiledKeyByHash: CompiledQuery<KeyRow> | undefined;

/** Finds a key by its hash, with its account's subscription. */
export async function findKeyByHash(db: DbOrTrx, keyHash: string): Promise<KeyRecord | undefined> {
  compiledKeyByHash ??= prepared(keyByHashQuery(db, "").compile());
  const { rows } = await db.executeQuery<KeyRow>({ ...compiledKeyByHash, parameters: [keyHash] });
  return rows[0];
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

/** A key that was revoked, and its account. */
export interface RevokedKey {
  keyId: number;
  accountId: number;
}

/**
 * Marks a key revoked (idempotent: a revoked key keeps its first revocation time); undefined for
 * an unknown key. Only SQL: the trigger of migration 0600 tells every process's key cache at
 * commit; `revokeKey` (`src/auth/service.ts`) also tells the caller's own cache at once.
 */
export async function revokeKeyByHash(db: DbOrTrx, keyHash: string): Promise<RevokedKey | undefined> {
  const row = await db
    .updateTable("api_keys")
    .set((eb) => ({ revoked_at: eb.fn.coalesce("revoked_at", eb.fn<Date>("now", [])) }))
    .where("key_hash", "=", keyHash)
    .returning(["id as keyId", "account_id as accountId"])
    .executeTakeFirst();
  return row;
}
