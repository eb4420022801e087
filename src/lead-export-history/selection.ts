import type { DbOrTrx } from "../db/database.js";
import { errors } from "../http/errors.js";
import { parseHistoryFilter } from "./filters.js";
import { countHistory, findHistoryIds } from "./repository.js";
import { entriesWithLeadData } from "./file-rows.js";

/** Entries per refresh, re-export or refresh-and-export request. */
export const MAX_ENTRIES = 5_000;

const BODY_FILTER_STYLE = { code: "bad_request", path: ["body", "filters"] } as const;

/** How a request names entries: tracking ids, or else a `filters` object. */
export interface EntrySelector {
  trackingIds?: number[];
  filters?: Record<string, unknown>;
}

/**
 * The tracking ids a request selects, in order: `trackingIds` as sent (repeats dropped; `filters`
 * then ignored and not checked), else the entries the `filters` select, newest export first. 400
 * `bad_request` for invalid filters, filters matching none or more than 5,000 entries, or
 * neither given. Ids not in the account's history stay in the list (refresh reports them).
 */
export async function selectTrackingIds(
  db: DbOrTrx,
  accountId: number,
  body: EntrySelector,
): Promise<number[]> {
  if (body.trackingIds !== undefined) return [...new Set(body.trackingIds)];
  if (body.filters === undefined || body.filters === null) {
    throw errors.badRequest("Send trackingIds or filters.");
  }
  const filter = parseHistoryFilter(body.filters, BODY_FILTER_STYLE);
  const count = await countHistory(db, accountId, filter);
  if (count === 0) throw errors.badRequest("The filters match no lead export history entry.");
  if (count > MAX_ENTRIES) {
    throw errors.badRequest(
      `The filters match ${count} entries; at most ${MAX_ENTRIES} can be refreshed or exported at once.`,
    );
  }
  return findHistoryIds(db, accountId, filter);
}

/**
 * The entries of a re-export or refresh-and-export: those among `trackingIds` with lead data, in
 * order. 404 when there is none; 400 `bad_request` when they come from more than one lead database
 * (an older export of another database cannot be combined with the rest; docs/lead-export-history.md).
 */
export async function exportableEntries(
  db: DbOrTrx,
  accountId: number,
  trackingIds: readonly number[],
): Promise<number[]> {
  const entries = await entriesWithLeadData(db, accountId, trackingIds);
  if (entries.length === 0) throw errors.notFound("No tracking id matches an entry with lead data.");
  const databases = new Set(entries.map((e) => e.databaseType));
  if (databases.size > 1) {
    throw errors.badRequest(
      `The selected entries come from exports of different lead databases (${[...databases].sort().join(", ")}) and cannot be combined in one file.`,
    );
  }
  return entries.map((e) => e.id);
}
