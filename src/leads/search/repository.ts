import { sql } from "kysely";
import type { DbOrTrx, Trx } from "../../db/database.js";
import type { LeadRecord } from "../lead.js";
import { leadRecordFromRow } from "../repository.js";
import type { LeadSnapshot } from "../snapshot.js";
import type { SearchFilters } from "./filters.js";
import { searchPageQuery } from "./query.js";

/** What a search found: counts over every match and the leads of one page, in order. */
export interface SearchPage {
  /** Every matching lead. */
  totalMatches: number;
  /** Matching leads the account has not received. */
  newMatches: number;
  /** The page, with whether the account already received each lead. */
  page: { lead: LeadRecord; received: boolean }[];
}

/**
 * Runs a search for an account: counts over every match and one page of leads with whether the
 * account already received each (see searchPageQuery for `cap`).
 */
export async function findSearchPage(
  db: DbOrTrx,
  filters: SearchFilters,
  options: { accountId: number; cap: number | null },
): Promise<SearchPage> {
  const { rows } = await searchPageQuery(filters, options).execute(db);
  const first = rows[0];
  return {
    totalMatches: Number(first?.total_matches ?? 0),
    newMatches: Number(first?.new_matches ?? 0),
    page: rows
      .filter((row) => row.page_id !== null && row.id !== null)
      .map((row) => ({ lead: leadRecordFromRow(row), received: row.received === true })),
  };
}

/** Of these leads, the ids the account already received (rows in its lead export history). */
export async function findReceivedLeadIds(
  db: DbOrTrx,
  accountId: number,
  leadIds: readonly number[],
): Promise<Set<number>> {
  if (leadIds.length === 0) return new Set();
  const rows = await db
    .selectFrom("lead_export_history")
    .select("lead_id")
    .where("account_id", "=", accountId)
    .where("lead_id", "in", [...leadIds])
    .execute();
  return new Set(rows.map((r) => r.lead_id));
}

/** One delivered lead for the lead export history. */
export interface DeliveredLead {
  lead: LeadRecord;
  snapshot: LeadSnapshot;
}

/**
 * Records delivered leads in the account's lead export history: a new row per lead, or for a
 * lead already there an update of `exported_at`, `export_method`, the snapshot and the lead's
 * last-updated date (one entry per lead). Runs in the charging transaction.
 */
export async function recordDeliveredLeads(
  trx: Trx,
  delivery: { accountId: number; method: string; exportedAt: Date; leads: DeliveredLead[] },
): Promise<void> {
  if (delivery.leads.length === 0) return;
  // Lock order by lead id, so two deliveries of overlapping leads never deadlock.
  const leads = [...delivery.leads].sort((a, b) => a.lead.id - b.lead.id);
  await trx
    .insertInto("lead_export_history")
    .values(
      leads.map(({ lead, snapshot }) => ({
        account_id: delivery.accountId,
        lead_id: lead.id,
        database_type: "other",
        exported_at: delivery.exportedAt,
        export_method: delivery.method,
        lead_last_updated: lead.lastUpdated,
        lead_snapshot: JSON.stringify(snapshot),
      })),
    )
    .onConflict((oc) =>
      oc.columns(["account_id", "lead_id"]).doUpdateSet({
        exported_at: (eb) => eb.ref("excluded.exported_at"),
        export_method: (eb) => eb.ref("excluded.export_method"),
        lead_last_updated: (eb) => eb.ref("excluded.lead_last_updated"),
        lead_snapshot: (eb) => eb.ref("excluded.lead_snapshot"),
      }),
    )
    .execute();
}

/** Makes the next lock wait of the transaction give up after `ms` (PostgreSQL error 55P03). */
export async function setLockTimeout(trx: Trx, ms: number): Promise<void> {
  await sql`select set_config('lock_timeout', ${`${Math.round(ms)}ms`}, true)`.execute(trx);
}

/** Makes every later statement of the transaction give up after `ms` (PostgreSQL error 57014). */
export async function setStatementTimeout(trx: Trx, ms: number): Promise<void> {
  await sql`select set_config('statement_timeout', ${String(Math.round(ms))}, true)`.execute(trx);
}

/** Whether an error is PostgreSQL's "lock not available" (a lock_timeout ran out). */
export function isLockTimeout(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: string }).code === "55P03";
}
