import { sql } from "kysely";
import type { DbOrTrx, Trx } from "../db/database.js";
import type { LeadRecord } from "../leads/lead.js";
import { LEAD_RECORD_COLUMNS, leadRecordFromRow, type LeadRecordRow } from "../leads/repository.js";
import { toEntry, type HistoryEntry } from "./repository.js";

/**
 * The account's entries among `entryIds`, locked for update in lead id order, the order
 * recordDeliveredLeads writes entries in (a refresh and a delivery of overlapping leads never
 * deadlock; the later waits for the earlier to commit). Ids of other accounts or not in the history are absent.
 */
export async function lockEntries(
  trx: Trx,
  accountId: number,
  entryIds: readonly number[],
): Promise<HistoryEntry[]> {
  if (entryIds.length === 0) return [];
  const rows = await trx
    .selectFrom("lead_export_history")
    .selectAll()
    .where("account_id", "=", accountId)
    .where(sql<boolean>`id = any(cast(${[...entryIds]} as integer[]))`)
    .orderBy("lead_id")
    .forUpdate()
    .execute();
  return rows.map(toEntry);
}

/** A lead as it is now, with its version. */
export interface LiveLead {
  lead: LeadRecord;
  version: number;
}

/** The current data and version of these leads, by lead id (leads no longer stored are absent). */
export async function findLiveLeads(db: DbOrTrx, leadIds: readonly number[]): Promise<Map<number, LiveLead>> {
  const out = new Map<number, LiveLead>();
  if (leadIds.length === 0) return out;
  const rows = await db
    .selectFrom("leads")
    .select([...LEAD_RECORD_COLUMNS, "version"])
    .where(sql<boolean>`id = any(cast(${[...new Set(leadIds)]} as integer[]))`)
    .execute();
  for (const row of rows) out.set(row.id, { lead: leadRecordFromRow(row), version: row.version });
  return out;
}

/** A refreshed entry: it now names the lead's current version. */
export interface RefreshedEntry {
  entryId: number;
  version: number;
  lastUpdated: Date | null;
  /** The changed fields to keep (null: none). */
  changedFields: string[] | null;
}

/**
 * Brings entries up to date in one statement: the version they name, the lead's last-updated
 * date, the changed fields; a copied snapshot is dropped (the version names the data now).
 * `exportedAt` and `exportMethod` stay: a refresh is not an export.
 */
export async function updateRefreshedEntries(
  trx: Trx,
  accountId: number,
  entries: readonly RefreshedEntry[],
): Promise<void> {
  if (entries.length === 0) return;
  const json = JSON.stringify(
    entries.map((e) => ({
      id: e.entryId,
      version: e.version,
      last_updated: e.lastUpdated?.toISOString() ?? null,
      changed: e.changedFields,
    })),
  );
  await sql`
    update lead_export_history h set
      lead_version = u.version,
      lead_last_updated = u.last_updated,
      lead_snapshot = null,
      last_changed_fields = case when u.changed is null or jsonb_typeof(u.changed) = 'null' then null
        else array(select jsonb_array_elements_text(u.changed)) end
    from jsonb_to_recordset(cast(${json} as jsonb))
      as u(id integer, version integer, last_updated timestamptz, changed jsonb)
    where h.id = u.id and h.account_id = ${accountId}`.execute(trx);
}

/** Clears the changed fields of the account's entries (refresh-and-export exported them). */
export async function clearChangedFields(
  trx: Trx,
  accountId: number,
  entryIds: readonly number[],
): Promise<void> {
  if (entryIds.length === 0) return;
  await trx
    .updateTable("lead_export_history")
    .set({ last_changed_fields: null })
    .where("account_id", "=", accountId)
    .where(sql<boolean>`id = any(cast(${[...entryIds]} as integer[]))`)
    .where("last_changed_fields", "is not", null)
    .execute();
}

/**
 * Kept old versions of leads (`lead_versions`), by `leadId:version`, read through its primary key:
 * the data an entry names when the lead has changed since.
 */
export async function findKeptVersions(
  db: DbOrTrx,
  refs: readonly { leadId: number; version: number }[],
): Promise<Map<string, LeadRecord>> {
  const out = new Map<string, LeadRecord>();
  if (refs.length === 0) return out;
  const { rows } = await sql<LeadRecordRow & { version: number }>`
    select ${sql.join(LEAD_RECORD_COLUMNS.map((c) => sql.ref(`v.${c}`)))}, v.version
    from unnest(cast(${refs.map((r) => r.leadId)} as integer[]), cast(${refs.map((r) => r.version)} as integer[]))
      as u(id, version)
    join lead_versions v on v.id = u.id and v.version = u.version`.execute(db);
  for (const row of rows) out.set(`${row.id}:${row.version}`, leadRecordFromRow(row));
  return out;
}
