import type { Selectable } from "kysely";
import type { DbOrTrx } from "../db/database.js";
import type { ExportHistoryTable } from "../db/schema/exports.js";
import type { ExportHistoryEntry, ExportMethod } from "./entry.js";

function toEntry(row: Selectable<ExportHistoryTable>): ExportHistoryEntry {
  return {
    id: row.id,
    accountId: row.account_id,
    exportId: row.export_id,
    fileName: row.file_name,
    fileType: row.file_type,
    leadCount: row.lead_count,
    fileSize: row.file_size,
    formatName: row.format_name,
    databaseType: row.database_type,
    exportMethod: row.export_method,
    partNumber: row.part_number,
    isTotal: row.is_total,
    storageKey: row.storage_key,
    filters: row.filters,
    fileDeletedAt: row.file_deleted_at,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

/** A file to record. */
export interface NewEntry {
  exportId: string;
  fileName: string;
  fileType: ExportHistoryEntry["fileType"];
  leadCount: number;
  fileSize: number;
  formatName: string | null;
  exportMethod: ExportMethod;
  partNumber: number | null;
  isTotal: boolean;
  storageKey: string;
  /** The export's search parameters; absent or null when not written from a search. */
  filters?: Record<string, unknown> | null;
  createdAt: Date;
  expiresAt: Date;
}

/** Inserts the entries in order; returns them with their ids. */
export async function insertEntries(
  db: DbOrTrx,
  accountId: number,
  entries: NewEntry[],
): Promise<ExportHistoryEntry[]> {
  if (entries.length === 0) return [];
  const rows = await db
    .insertInto("export_history")
    .values(
      entries.map((e) => ({
        account_id: accountId,
        export_id: e.exportId,
        file_name: e.fileName,
        file_type: e.fileType,
        lead_count: e.leadCount,
        file_size: e.fileSize,
        format_name: e.formatName,
        export_method: e.exportMethod,
        part_number: e.partNumber,
        is_total: e.isTotal,
        storage_key: e.storageKey,
        filters: e.filters ? JSON.stringify(e.filters) : null,
        created_at: e.createdAt,
        expires_at: e.expiresAt,
      })),
    )
    .returningAll()
    .execute();
  return rows.map(toEntry).sort((a, b) => a.id - b.id);
}

/** One page of the account's entries, newest first, and how many there are. */
export async function listEntries(
  db: DbOrTrx,
  accountId: number,
  page: { limit: number; offset: number },
): Promise<{ entries: ExportHistoryEntry[]; totalCount: number }> {
  const [rows, count] = await Promise.all([
    db
      .selectFrom("export_history")
      .selectAll()
      .where("account_id", "=", accountId)
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    db
      .selectFrom("export_history")
      .select((eb) => eb.fn.countAll<number>().as("count"))
      .where("account_id", "=", accountId)
      .executeTakeFirstOrThrow(),
  ]);
  return { entries: rows.map(toEntry), totalCount: Number(count.count) };
}

/** One entry of the account (undefined for another account's or an unknown id). */
export async function findEntry(
  db: DbOrTrx,
  accountId: number,
  id: number,
): Promise<ExportHistoryEntry | undefined> {
  const row = await db
    .selectFrom("export_history")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row && toEntry(row);
}

/** Expired entries whose bytes are still stored, oldest first. */
export async function findExpiredStored(
  db: DbOrTrx,
  now: Date,
  limit: number,
): Promise<ExportHistoryEntry[]> {
  const rows = await db
    .selectFrom("export_history")
    .selectAll()
    .where("file_deleted_at", "is", null)
    .where("expires_at", "<=", now)
    .orderBy("expires_at")
    .limit(limit)
    .execute();
  return rows.map(toEntry);
}

/** Marks entries whose bytes were removed from storage. */
export async function markFilesDeleted(db: DbOrTrx, ids: number[], at: Date): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable("export_history").set({ file_deleted_at: at }).where("id", "in", ids).execute();
}
