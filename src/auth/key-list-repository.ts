import { sql } from "kysely";
import type { DbOrTrx } from "../db/database.js";

/** One of an account's API keys as the key operations show it (never the secret or its hash). */
export interface ListedKey {
  id: number;
  name: string;
  keyPrefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

function keysOf(db: DbOrTrx, accountId: number) {
  return db
    .selectFrom("api_keys")
    .leftJoin("api_key_usage", "api_key_usage.key_id", "api_keys.id")
    .select([
      "api_keys.id as id",
      "api_keys.name as name",
      "api_keys.key_prefix as keyPrefix",
      "api_keys.created_at as createdAt",
      "api_key_usage.last_used_at as lastUsedAt",
      "api_keys.revoked_at as revokedAt",
    ])
    .where("api_keys.account_id", "=", accountId);
}

/** The account's keys, newest first. */
export async function listAccountKeys(db: DbOrTrx, accountId: number): Promise<ListedKey[]> {
  return keysOf(db, accountId).orderBy("api_keys.id", "desc").execute();
}

/** One of the account's keys, or undefined (another account's key is never found). */
export async function findAccountKey(
  db: DbOrTrx,
  accountId: number,
  id: number,
): Promise<ListedKey | undefined> {
  return keysOf(db, accountId).where("api_keys.id", "=", id).executeTakeFirst();
}

/** Locks the account's row: key creations of one account run one after the other (the limit). */
export async function lockAccountForKeys(db: DbOrTrx, accountId: number): Promise<void> {
  await db.selectFrom("accounts").select("id").where("id", "=", accountId).forUpdate().executeTakeFirst();
}

/** How many of the account's keys are not revoked. */
export async function countActiveKeys(db: DbOrTrx, accountId: number): Promise<number> {
  const row = await db
    .selectFrom("api_keys")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("account_id", "=", accountId)
    .where("revoked_at", "is", null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Revokes one of the account's keys by id (a revoked key keeps its first revocation time); false
 * when the account has no such key. The trigger of migration 0600 tells every key cache.
 */
export async function revokeAccountKey(db: DbOrTrx, accountId: number, id: number): Promise<boolean> {
  const row = await db
    .updateTable("api_keys")
    .set((eb) => ({ revoked_at: eb.fn.coalesce("revoked_at", eb.fn<Date>("now", [])) }))
    .where("id", "=", id)
    .where("account_id", "=", accountId)
    .returning("id")
    .executeTakeFirst();
  return row !== undefined;
}

/** Records that a key authenticated a request now. */
export async function recordKeyUse(db: DbOrTrx, keyId: number): Promise<void> {
  await sql`
    insert into api_key_usage (key_id, last_used_at) values (${keyId}, now())
    on conflict (key_id) do update set last_used_at = excluded.last_used_at`.execute(db);
}
