import { sql } from "kysely";
import type { DbOrTrx, Trx } from "../db/database.js";
import type { LeadRecord } from "./lead.js";
import { LEAD_RECORD_COLUMNS, leadRecordFromRow } from "./repository.js";

/**
 * The advisory lock ordering deliveries against changes of lead data (migration 0800, which
 * hard-codes the same number in its trigger): recording a delivery holds it shared to its commit;
 * the trigger that bumps a lead's version tries it exclusively and, when a delivery holds it,
 * keeps the old version without checking. So a version a delivery names is either the current
 * one or kept in `lead_versions`, and no change waits for a delivery.
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
 * of an older entry is dropped, the version names the data now). Leads no longer stored are
 * skipped. Returns how many entries are new: the leads the account had not received, which the
 * caller charges for in the same transaction.
 *
 * The unique key makes this the sticky rule's arbiter: a concurrent delivery of the same lead to
 * the same account waits here until the other commits (then finds the entry: not new) or rolls
 * back (then inserts it: new). Callers take the account's credit lock only after this, so no
 * transaction holds that lock while it waits for entries.
 */
export async function recordDeliveredLeads(
  trx: Trx,
  delivery: { accountId: number; method: string; exportedAt: Date; leadIds: readonly number[] },
): Promise<number> {
  if (delivery.leadIds.length === 0) return 0;
  await sql`select pg_advisory_xact_lock_shared(${sql.lit(LEAD_VERSION_LOCK)})`.execute(trx);
  // Rows in lead id order, so two deliveries of overlapping leads lock entries in the same order.
  // `xmax = 0` tells an inserted row from an updated one (an update sets it to this transaction).
  const { rows } = await sql<{ inserted: string }>`
    with delivered as (
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
        lead_snapshot = null
      returning (xmax = 0) as inserted
    )
    select count(*) filter (where inserted) as inserted from delivered`.execute(trx);
  return Number(rows[0]?.inserted ?? 0);
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
