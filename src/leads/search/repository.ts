import type { DbOrTrx } from "../../db/database.js";
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
