import type { DbOrTrx } from "../../db/database.js";
import type { LeadRecord } from "../lead.js";
import { leadRecordFromRow } from "../repository.js";
import type { SearchFilters } from "./filters.js";
import { searchPageJsonQuery, searchPageQuery, type SearchPageOptions } from "./query.js";

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
  options: SearchPageOptions,
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

/** What a search found, with the page's leads as the API's Lead in JSON text (leadJsonSql). */
export interface SearchPageJson {
  totalMatches: number;
  newMatches: number;
  page: { id: number; json: string }[];
}

/** findSearchPage with the page's leads as JSON text: nothing is built per lead in the service. */
export async function findSearchPageJson(
  db: DbOrTrx,
  filters: SearchFilters,
  options: SearchPageOptions,
): Promise<SearchPageJson> {
  const { rows } = await searchPageJsonQuery(filters, options).execute(db);
  const first = rows[0];
  return {
    totalMatches: Number(first?.total_matches ?? 0),
    newMatches: Number(first?.new_matches ?? 0),
    page: rows.flatMap((row) =>
      row.page_id !== null && row.lead_json !== null ? [{ id: row.page_id, json: row.lead_json }] : [],
    ),
  };
}
