import type { Selectable } from "kysely";
import type { DbOrTrx } from "../db/database.js";
import type { LeadExportHistoryTable } from "../db/schema/leads.js";
import type { HistoryFilter } from "./filters.js";

/** One lead the account has received, as the service sees it (domain shape, not a row). */
export interface HistoryEntry {
  id: number;
  accountId: number;
  leadId: number;
  databaseType: string;
  exportedAt: Date;
  exportMethod: string;
  leadLastUpdated: Date | null;
  /** A copy of the lead's data stored with the entry (older entries). */
  leadSnapshot: Record<string, unknown> | null;
  /** The version of the lead delivered (see src/leads/versions.ts); null with a copied snapshot. */
  leadVersion: number | null;
  lastChangedFields: string[] | null;
}

/** A page of entries and how many match in all. */
export interface HistoryPage {
  entries: HistoryEntry[];
  totalCount: number;
}

export function toEntry(row: Selectable<LeadExportHistoryTable>): HistoryEntry {
  return {
    id: row.id,
    accountId: row.account_id,
    leadId: row.lead_id,
    databaseType: row.database_type,
    exportedAt: row.exported_at,
    exportMethod: row.export_method,
    leadLastUpdated: row.lead_last_updated,
    leadSnapshot: row.lead_snapshot,
    leadVersion: row.lead_version,
    lastChangedFields: row.last_changed_fields,
  };
}

/** The account's entries selected by the filter (no order, no page). */
export function matching(db: DbOrTrx, accountId: number, filter: HistoryFilter) {
  let query = db
    .selectFrom("lead_export_history")
    .where("account_id", "=", accountId)
    .where("database_type", "=", filter.databaseType);
  if (filter.exportedFrom) query = query.where("exported_at", ">=", filter.exportedFrom);
  if (filter.exportedBefore) query = query.where("exported_at", "<", filter.exportedBefore);
  if (filter.exportMethod !== null) query = query.where("export_method", "=", filter.exportMethod);
  return query;
}

/** One page of the account's matching entries, newest export first, and the number of matches. */
export async function findHistoryPage(
  db: DbOrTrx,
  accountId: number,
  filter: HistoryFilter,
  page: { limit: number; offset: number },
): Promise<HistoryPage> {
  const rows = await matching(db, accountId, filter)
    .selectAll()
    .orderBy("exported_at", "desc")
    .orderBy("id", "desc")
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const { count } = await matching(db, accountId, filter)
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .executeTakeFirstOrThrow();
  return { entries: rows.map(toEntry), totalCount: Number(count) };
}

/** The tracking ids of every matching entry of the account, newest export first. */
export async function findHistoryIds(
  db: DbOrTrx,
  accountId: number,
  filter: HistoryFilter,
): Promise<number[]> {
  const rows = await matching(db, accountId, filter)
    .select("id")
    .orderBy("exported_at", "desc")
    .orderBy("id", "desc")
    .execute();
  return rows.map((row) => row.id);
}

/** How many of the account's entries the filter selects. */
export async function countHistory(db: DbOrTrx, accountId: number, filter: HistoryFilter): Promise<number> {
  const { count } = await matching(db, accountId, filter)
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .executeTakeFirstOrThrow();
  return Number(count);
}
