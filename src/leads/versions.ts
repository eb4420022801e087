import { sql } from "kysely";
import type { DbOrTrx, Trx } from "../db/database.js";
import type { LeadRecord } from "./lead.js";
import { LEAD_RECORD_COLUMNS, leadRecordFromRow } from "./repository.js";

/**
 * The advisory lock ordering deliveries against changes of lead data (migration 0800, which
 * hard-codes the same number in its trigger): recording a delivery holds it shared, the trigger
 * that bumps a lead's version holds it exclusively. So a version a delivery names is either the
 * current one or kept in `lead_versions`.
 */
export const LEAD_VERSION_LOCK = 7_246_008;

/** A lead at one version (what a lead export history entry names). */
export interface LeadVersionRef {
  leadId: number;
  version: number;
}

const refKey = (leadId: number, version: number) => `${leadId}:${version}`;

/**
 * Records delivered leads in the account's lead export history, server-side in one statement: a
 * new entry per lead, or for a lead already there an update of `exported_at`, `export_method`,
 * the delivered version and the lead's last-updated date (one entry per lead; a copied snapshot
 * of an older entry is dropped, the version names the data now). Runs in the charging
 * transaction; leads no longer stored are skipped.
 */
export async function recordDeliveredLeads(
  trx: Trx,
  delivery: { accountId: number; method: string; exportedAt: Date; leadIds: readonly number[] },
): Promise<void> {
  if (delivery.leadIds.length === 0) return;
  await sql`select pg_advisory_xact_lock_shared(${sql.lit(LEAD_VERSION_LOCK)})`.execute(trx);
  // Rows in lead id order, so two deliveries of overlapping leads lock entries in the same order.
  await sql`
    insert into lead_export_history
      (account_id, lead_id, exported_at, export_method, lead_last_updated, lead_version, lead_snapshot)
    select ${delivery.accountId}, l.id, ${delivery.exportedAt}, ${delivery.method}, l.last_updated, l.version, null
    from leads l
    where l.id = any(cast(${[...delivery.leadIds]} as integer[]))
    order by l.id
    on conflict (account_id, lead_id) do update set
      exported_at = excluded.exported_at,
      export_method = excluded.export_method,
      lead_last_updated = excluded.lead_last_updated,
      lead_version = excluded.lead_version,
      lead_snapshot = null`.execute(trx);
}

/**
 * The data of leads at the given versions: the current row when the version is current, else the
 * kept old version. Keyed by `leadId:version`; a version that is in neither place is absent.
 */
export async function findLeadVersions(
  db: DbOrTrx,
  refs: readonly LeadVersionRef[],
): Promise<Map<string, LeadRecord>> {
  const out = new Map<string, LeadRecord>();
  if (refs.length === 0) return out;
  const ids = refs.map((r) => r.leadId);
  const versions = refs.map((r) => r.version);
  const wanted = sql<boolean>`(id, version) in (select * from unnest(cast(${ids} as integer[]), cast(${versions} as integer[])))`;
  const rows = await db
    .selectFrom("leads")
    .select([...LEAD_RECORD_COLUMNS, "version"])
    .where(wanted)
    .unionAll(
      db
        .selectFrom("lead_versions")
        .select([...LEAD_RECORD_COLUMNS, "version"])
        .where(wanted),
    )
    .execute();
  for (const row of rows) out.set(refKey(row.id, row.version), leadRecordFromRow(row));
  return out;
}

/** The key of a version in findLeadVersions' answer. */
export function leadVersionKey(ref: LeadVersionRef): string {
  return refKey(ref.leadId, ref.version);
}
