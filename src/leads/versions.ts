import { sql } from "kysely";
import { creditLockAfter, creditLockTaken, type CreditLockOffer } from "../credits/ledger.js";
import { executePrepared, type DbOrTrx, type Trx } from "../db/database.js";
import { integerArray } from "../db/integer-array.js";
import { leadEventStatementParts, subscribedEventTypesArray } from "../events/outbox.js";
import type { EventType, LeadEventSource } from "../events/types.js";
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

/** A delivery of leads to an account, as recordDeliveredLeads records it. */
export interface LeadDelivery {
  accountId: number;
  /** The lead export history's `exportMethod` (`api`, `email_schedule`, `crm_push`, `enrichment`). */
  method: string;
  exportedAt: Date;
  leadIds: readonly number[];
  /**
   * The caller read the account's history (in an earlier snapshot of this transaction or another)
   * and found none of these leads there. Their entries are then inserted without the conflict
   * check, about half the database time for 100,000 leads; if one arrived meanwhile (a concurrent
   * delivery, unique violation), the insert is undone to a savepoint and the delivery recorded as
   * usual, with the same outcome.
   */
  newToAccount?: boolean;
  /**
   * Lead events of a push: the integration pushed to gets none, and a lead the account already
   * had sends `lead.updated` even when its data did not change (a re-push).
   */
  push?: { integrationId: number };
}

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
 *
 * Lead events, in the same transaction (src/events/outbox.ts): `lead.created` for each new lead,
 * `lead.updated` for a lead received again at a newer version than the account had (any re-push).
 * Enrichment results send none. An account without a subscription to them pays one indexed query.
 */
export async function recordDeliveredLeads(trx: Trx, delivery: LeadDelivery): Promise<number> {
  if (delivery.leadIds.length === 0) return 0;
  return (await startLeadDelivery(trx, delivery)).record(delivery.leadIds, delivery.exportedAt);
}

/** A delivery started by startLeadDelivery: records its leads, as recordDeliveredLeads does. */
export interface StartedLeadDelivery {
  /** With `creditLock`, the statement ends by taking the account's credit lock (creditLockAfter). */
  record(leadIds: readonly number[], exportedAt: Date, creditLock?: CreditLockOffer): Promise<number>;
}

/**
 * The first half of recordDeliveredLeads, for a caller that knows the account before the leads
 * (a search starts it while its search statement runs): the lead version lock and, unless no
 * event is sent, the account's subscribed event types, in one round trip. Versions the caller reads
 * after this (in this transaction or any later statement) are ones the lock protects.
 */
export async function startLeadDelivery(
  trx: Trx,
  delivery: Omit<LeadDelivery, "leadIds" | "exportedAt">,
): Promise<StartedLeadDelivery> {
  const types =
    delivery.method === "enrichment" ? sql<null>`null` : subscribedEventTypesArray(delivery.accountId);
  const lock = sql<{ types: EventType[] | null }>`
    select pg_advisory_xact_lock_shared(${sql.lit(LEAD_VERSION_LOCK)}), ${types} as types`;
  const { rows: locked } = await executePrepared(trx, lock.compile(trx));
  const subscribed = new Set(locked[0]?.types ?? []);
  return {
    async record(leadIds, exportedAt, creditLock) {
      if (leadIds.length === 0) return 0;
      const run = async (insertOnly: boolean) => {
        const statement = recordStatement(
          { ...delivery, leadIds, exportedAt },
          { created: subscribed.has("lead.created"), updated: subscribed.has("lead.updated") },
          insertOnly,
          creditLock,
        );
        return (await executePrepared(trx, sql<RecordRow>`${statement}`.compile(trx))).rows;
      };
      const rows = delivery.newToAccount ? await insertingNew(trx, run) : await run(false);
      if (creditLock) creditLockTaken(creditLock, rows[0]);
      return Number(rows[0]?.inserted ?? 0);
    },
  };
}

/** An entry already there gets the delivery's time, method and version (one entry per lead). */
const upsertEntry = sql`on conflict (account_id, lead_id) do update set
  exported_at = excluded.exported_at,
  export_method = excluded.export_method,
  lead_last_updated = excluded.lead_last_updated,
  lead_version = excluded.lead_version,
  lead_snapshot = null`;

/** PostgreSQL's unique_violation. */
const UNIQUE_VIOLATION = "23505";

/**
 * Runs the recording as a plain insert inside a savepoint, and again as the upsert when an entry
 * of one of the leads appeared since the caller looked (see LeadDelivery.newToAccount). The insert
 * waits for a concurrent delivery of the same lead like the upsert does, so the outcome is the
 * same: the lead is new only when that delivery rolled back.
 */
async function insertingNew<T>(trx: Trx, run: (insertOnly: boolean) => Promise<T>): Promise<T> {
  await sql`savepoint record_new_entries`.execute(trx);
  try {
    const rows = await run(true);
    await sql`release savepoint record_new_entries`.execute(trx);
    return rows;
  } catch (err) {
    if ((err as { code?: string } | null)?.code !== UNIQUE_VIOLATION) throw err;
    await sql`rollback to savepoint record_new_entries`.execute(trx);
    return run(false);
  }
}

/** The row of recordStatement (the credit lock's columns with creditLockAfter). */
interface RecordRow {
  inserted: string | null;
  credit_period_start?: Date | null;
  credit_low_balance_notified?: boolean | null;
  credit_auto_top_up?: boolean | null;
}

/**
 * The one statement that records a delivery: the entries (rows in lead id order, so two
 * deliveries of overlapping leads lock entries in the same order; `xmax = 0` tells an inserted
 * row from an updated one), and, for the subscribed types only, the outbox rows of its lead events
 * and the account's dispatch job, so no list of leads travels to the service and back.
 * `prior` reads the entries as they were before the statement (one snapshot for all of it).
 */
function recordStatement(
  delivery: LeadDelivery,
  { created, updated }: { created: boolean; updated: boolean },
  insertOnly: boolean,
  creditLock?: CreditLockOffer,
) {
  // `= any(array)`, not integerSet: its plan (the leads in id order, by index or a scan) measured
  // faster for 100,000 ids than a join with the set, planning included.
  const ids = integerArray(delivery.leadIds);
  const events = {
    accountId: delivery.accountId,
    source: delivery.method as LeadEventSource,
    excludeIntegrationId: delivery.push?.integrationId,
  };
  // A push sends lead.updated for every lead received again; otherwise only for newer versions.
  const comparesVersions = updated && !delivery.push && !insertOnly;
  const ctes = [];
  if (comparesVersions) {
    ctes.push(sql`prior as (
      select lead_id, lead_version from lead_export_history
      where account_id = ${delivery.accountId} and lead_id = any(${ids}))`);
  }
  ctes.push(sql`delivered as (
      insert into lead_export_history
        (account_id, lead_id, exported_at, export_method, lead_last_updated, lead_version, lead_snapshot)
      select ${delivery.accountId}, l.id, ${delivery.exportedAt}, ${delivery.method}, l.last_updated, l.version, null
      from leads l
      where l.id = any(${ids})
      order by l.id
      ${insertOnly ? sql`` : upsertEntry}
      returning lead_id, lead_version, ${insertOnly ? sql`true` : sql`(xmax = 0)`} as inserted)`);
  const written: string[] = [];
  if (created) {
    const refs = sql`select lead_id, lead_version from delivered where inserted`;
    ctes.push(
      sql`created_events as (${leadEventStatementParts.insert({ ...events, type: "lead.created" }, refs)})`,
    );
    written.push("created_events");
  }
  if (updated) {
    const refs = comparesVersions
      ? sql`select d.lead_id, d.lead_version from delivered d left join prior p on p.lead_id = d.lead_id
          where not d.inserted and p.lead_version is distinct from d.lead_version`
      : sql`select lead_id, lead_version from delivered where not inserted`;
    ctes.push(
      sql`updated_events as (${leadEventStatementParts.insert({ ...events, type: "lead.updated" }, refs)})`,
    );
    written.push("updated_events");
  }
  if (written.length > 0) {
    ctes.push(sql`dispatch as (${leadEventStatementParts.dispatchWhen(delivery.accountId, written)})`);
  }
  const dispatched = written.length > 0 ? sql`, (select count(*) from dispatch) as dispatched` : sql``;
  // The credit lock last, once every entry is written (chargeDelivery's lock order).
  const lock = creditLock && creditLockAfter(creditLock, "delivered");
  if (lock) ctes.push(lock.cte);
  const lockColumns = lock ? sql`, ${lock.columns}` : sql``;
  return sql`with ${sql.join(ctes, sql`, `)}
    select count(*) filter (where inserted) as inserted ${dispatched} ${lockColumns} from delivered`;
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
  const wanted = sql<boolean>`(id, version) in (select * from unnest(${integerArray(ids)}, ${integerArray(versions)}))`;
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
