import { sql } from "kysely";
import type { DbOrTrx, Trx } from "../../db/database.js";
import type { LeadRecord } from "../lead.js";
import { leadRecordFromRow } from "../repository.js";
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

/**
 * Memory of one search's bitmaps, matches and sorts (PostgreSQL `work_mem`, for its transaction).
 * The default 4 MB made the trigram bitmaps of common terms lossy at 5M leads (whole pages
 * rechecked: 1.4 million rows for a search of 4,444 matches) and spilled 350,000 matches to disk
 * (docs/search.md "The search's settings").
 */
export const SEARCH_WORK_MEM = "64MB";

/**
 * The settings of a search's transaction, in one statement: `work_mem` (SEARCH_WORK_MEM), the
 * parallel workers' start-up priced as on a machine whose cores are free for them (PostgreSQL's
 * defaults price a worker at 1,000 rows), and, with `timeoutMs`, a statement timeout.
 */
export async function tuneSearch(trx: Trx, timeoutMs: number | null): Promise<void> {
  const timeout =
    timeoutMs === null
      ? sql``
      : sql`, set_config('statement_timeout', ${String(Math.round(timeoutMs))}, true)`;
  await sql`select set_config('work_mem', ${SEARCH_WORK_MEM}, true),
    set_config('parallel_setup_cost', '10', true), set_config('parallel_tuple_cost', '0.001', true)
    ${timeout}`.execute(trx);
}
