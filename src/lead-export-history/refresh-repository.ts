import { sql, type RawBuilder } from "kysely";
import type { DbOrTrx, Trx } from "../db/database.js";
import { integerArray, integerSet } from "../db/integer-array.js";
import { leadFieldSql } from "../leads/field-sql.js";
import { LEAD_FIELDS, type LeadField } from "../leads/fields.js";
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
    .where(sql<boolean>`id in ${integerSet(entryIds)}`)
    .orderBy("lead_id")
    .forUpdate()
    .execute();
  return rows.map(toEntry);
}

/**
 * A snapshot field's value in SQL, from a row of `leads` or `lead_versions` aliased `t`, as the
 * snapshot shows it (leadFieldSql: `website` the registered URL or else the crawled one,
 * `phoneTotal` the phones given, ...), date-times to the millisecond the API shows (compared as
 * timestamps, not as text); null for the id and for constants (the same for every lead).
 */
function snapshotValueSql(field: LeadField, t: string): RawBuilder<unknown> | null {
  if (field.column === "id" || field.derived?.kind === "constant") return null;
  if (field.type === "timestamp" && field.column !== null) {
    return sql`date_trunc('milliseconds', ${sql.ref(`${t}.${field.column}`)})`;
  }
  return leadFieldSql(field, t);
}

/** The snapshot keys whose values differ between rows `v` and `l`, in field order (a text[]). */
const CHANGED_KEYS_SQL = sql`array_remove(array[${sql.join(
  LEAD_FIELDS.flatMap((field) => {
    const before = snapshotValueSql(field, "v");
    const after = snapshotValueSql(field, "l");
    return before && after
      ? [sql`case when ${before} is distinct from ${after} then ${sql.lit(field.alias)} end`]
      : [];
  }),
)}]::text[], null)`;

/** The columns a refresh reads of every lead (the rest only where it needs the lead's data). */
const ALWAYS_READ = new Set<string>(["id", "last_updated", "registered_url", "crawled_url"]);

/** A lead's current state as a refresh reads it, with what changed since the entry's version. */
export interface RefreshRead {
  version: number;
  lastUpdated: Date | null;
  registeredUrl: string | null;
  crawledUrl: string | null;
  /** The lead's data (read when asked for). */
  lead: LeadRecord | null;
  /**
   * The snapshot keys changed since the version the entry names: empty when it names the current
   * version, null when that version is not kept (or the entry names none).
   */
  changedSinceEntry: string[] | null;
}

/**
 * The current state of the entries' leads, by lead id, in one statement: version, last-updated
 * date, URLs, the data of the entries `withData`, and the keys changed since each entry's version
 * (compared in PostgreSQL with the kept version, field by field as the snapshot shows them).
 * Leads no longer stored are absent.
 */
export async function readRefreshState(
  db: DbOrTrx,
  entries: readonly { leadId: number; leadVersion: number | null; withData: boolean }[],
): Promise<Map<number, RefreshRead>> {
  const out = new Map<number, RefreshRead>();
  if (entries.length === 0) return out;
  const data = sql.join(
    LEAD_RECORD_COLUMNS.map((c) =>
      ALWAYS_READ.has(c)
        ? sql.ref(`l.${c}`)
        : sql`case when e.with_data then ${sql.ref(`l.${c}`)} end as ${sql.ref(c)}`,
    ),
  );
  const { rows } = await sql<
    LeadRecordRow & { version: number; with_data: boolean; changed: string[] | null }
  >`
    select ${data}, l.version, e.with_data,
      case when e.version is null then null
        when e.version = l.version then array[]::text[]
        when v.id is null then null
        else ${CHANGED_KEYS_SQL} end as changed
    from unnest(${integerArray(entries.map((e) => e.leadId))},
      cast(${entries.map((e) => e.leadVersion)} as integer[]),
      cast(${entries.map((e) => e.withData)} as boolean[])) as e(lead_id, version, with_data)
    join leads l on l.id = e.lead_id
    left join lead_versions v on v.id = e.lead_id and v.version = e.version and e.version <> l.version`.execute(
    db,
  );
  for (const row of rows) {
    out.set(row.id, {
      version: row.version,
      lastUpdated: row.last_updated,
      registeredUrl: row.registered_url,
      crawledUrl: row.crawled_url,
      lead: row.with_data ? leadRecordFromRow(row) : null,
      changedSinceEntry: row.changed,
    });
  }
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
    .where(sql<boolean>`id in ${integerSet(entryIds)}`)
    .where("last_changed_fields", "is not", null)
    .execute();
}
