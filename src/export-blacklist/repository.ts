import type { Selectable } from "kysely";
import type { DbOrTrx } from "../db/database.js";
import type { ExportBlacklistTable } from "../db/schema/leads.js";

/** Kinds of blacklist entry. */
export type BlacklistEntryType = "domain";

/** A blacklist entry as the service sees it (domain shape, not a row). */
export interface BlacklistEntry {
  id: number;
  entryType: BlacklistEntryType;
  value: string;
  createdAt: Date;
}

/** Rows per INSERT statement (keeps the statement under the bind-parameter limit). */
const INSERT_CHUNK = 1000;

function toEntry(row: Selectable<ExportBlacklistTable>): BlacklistEntry {
  return { id: row.id, entryType: row.entry_type, value: row.value, createdAt: row.created_at };
}

/** The account's entries, newest first. */
export async function listEntries(db: DbOrTrx, accountId: number): Promise<BlacklistEntry[]> {
  const rows = await db
    .selectFrom("export_blacklist")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .execute();
  return rows.map(toEntry);
}

/** The normalised domains the account has blacklisted. */
export async function listDomainValues(db: DbOrTrx, accountId: number): Promise<string[]> {
  const rows = await db
    .selectFrom("export_blacklist")
    .select("value")
    .where("account_id", "=", accountId)
    .where("entry_type", "=", "domain")
    .execute();
  return rows.map((row) => row.value);
}

/**
 * Inserts the values that are not listed yet (the unique key decides, so two concurrent requests
 * never store a domain twice); returns only the entries created, in no particular order.
 */
export async function insertNewEntries(
  db: DbOrTrx,
  accountId: number,
  entryType: BlacklistEntryType,
  values: readonly string[],
): Promise<BlacklistEntry[]> {
  const created: BlacklistEntry[] = [];
  for (let start = 0; start < values.length; start += INSERT_CHUNK) {
    const chunk = values.slice(start, start + INSERT_CHUNK);
    const rows = await db
      .insertInto("export_blacklist")
      .values(chunk.map((value) => ({ account_id: accountId, entry_type: entryType, value })))
      .onConflict((oc) => oc.columns(["account_id", "entry_type", "value"]).doNothing())
      .returningAll()
      .execute();
    created.push(...rows.map(toEntry));
  }
  return created;
}

/** Deletes one of the account's entries; false when the account has no such entry. */
export async function deleteEntry(db: DbOrTrx, accountId: number, id: number): Promise<boolean> {
  const result = await db
    .deleteFrom("export_blacklist")
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
