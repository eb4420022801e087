import type { DbOrTrx } from "../../db/database.js";
import type { SearchFilters } from "./filters.js";
import { previewLeadJsonSql } from "./preview-sql.js";
import { searchPageJsonQuery, type LeadJsonOf, type SearchPageOptions } from "./query.js";

/**
 * What a search found: counts over every match and the leads of one page, in order, each as JSON
 * text built by PostgreSQL (nothing is built per lead in the service).
 */
export interface SearchPageJson {
  /** Every matching lead (with `onlyNew`, every match the account has not received). */
  totalMatches: number;
  /** Matching leads the account has not received. */
  newMatches: number;
  /** The page's leads. */
  page: { id: number; json: string }[];
}

async function findPage(
  db: DbOrTrx,
  filters: SearchFilters,
  options: SearchPageOptions,
  leadJson?: LeadJsonOf,
): Promise<SearchPageJson> {
  const { rows } = await searchPageJsonQuery(filters, options, leadJson).execute(db);
  const first = rows[0];
  return {
    totalMatches: Number(first?.total_matches ?? 0),
    newMatches: Number(first?.new_matches ?? 0),
    page: rows.flatMap((row) =>
      row.page_id !== null && row.lead_json !== null ? [{ id: row.page_id, json: row.lead_json }] : [],
    ),
  };
}

/**
 * Runs a search for an account (searchPageJsonQuery: `cap`, `newFirst`, `take`, `onlyNew`), each
 * lead of the page as the API's Lead (leadJsonSql).
 */
export function findSearchPageJson(
  db: DbOrTrx,
  filters: SearchFilters,
  options: SearchPageOptions,
): Promise<SearchPageJson> {
  return findPage(db, filters, options);
}

/**
 * Runs a preview's search for an account: each lead of the page as the preview's lead
 * (previewLeadJsonSql: masked unless the account received it, with `contactExported`).
 */
export function findPreviewPageJson(
  db: DbOrTrx,
  filters: SearchFilters,
  options: SearchPageOptions,
): Promise<SearchPageJson> {
  return findPage(db, filters, options, previewLeadJsonSql);
}
