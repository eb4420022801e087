import type { DbOrTrx } from "../db/database.js";
import { parseHistoryFilter } from "./filters.js";
import { findHistoryIds, findHistoryPage, type HistoryEntry } from "./repository.js";
import { liveLeadData } from "./live-lead.js";
import { toLeadSnapshot, type LeadSnapshot } from "../leads/snapshot.js";
import { findLeadVersions, leadVersionKey } from "../leads/versions.js";

/** Query parameters of the two list requests (schema-checked: types, bounds, enum). */
export interface HistoryQuery {
  limit?: number | string;
  offset?: number | string;
  databaseType?: string;
  dateFrom?: string;
  dateTo?: string;
  exportMethod?: string;
}

/**
 * An entry with the lead data a client sees: `snapshot` is the data delivered (the copy stored
 * with older entries, else the delivered version); `lead` is the snapshot, else the live lead,
 * else null.
 */
export interface HistoryEntryWithLead {
  entry: HistoryEntry;
  snapshot: Record<string, unknown> | null;
  lead: Record<string, unknown> | null;
}

/** Entries per page when `limit` is not given. */
export const DEFAULT_LIMIT = 50;
const QUERY_STYLE = { code: "validation_error", path: ["query"] } as const;

/**
 * Adds the delivered data and `lead` to each entry: the delivered versions in one query, live data
 * (one query) only for entries with neither a stored copy nor a version.
 */
async function withLeads(db: DbOrTrx, entries: HistoryEntry[]): Promise<HistoryEntryWithLead[]> {
  const refs = entries.flatMap((e) =>
    e.leadSnapshot === null && e.leadVersion !== null ? [{ leadId: e.leadId, version: e.leadVersion }] : [],
  );
  const versions = await findLeadVersions(db, refs);
  const snapshotOf = (e: HistoryEntry): LeadSnapshot | null => {
    if (e.leadSnapshot !== null) return e.leadSnapshot;
    if (e.leadVersion === null) return null;
    const lead = versions.get(leadVersionKey({ leadId: e.leadId, version: e.leadVersion }));
    return lead ? toLeadSnapshot(lead) : null;
  };
  const snapshots = entries.map(snapshotOf);
  const missing = entries.filter((_, i) => snapshots[i] === null).map((e) => e.leadId);
  const live = missing.length > 0 ? await liveLeadData(db, missing) : new Map<number, LeadSnapshot>();
  return entries.map((entry, i) => ({
    entry,
    snapshot: snapshots[i]!,
    lead: snapshots[i] ?? live.get(entry.leadId) ?? null,
  }));
}

/**
 * One page of the account's lead export history, newest export first, with the total number of
 * matches. Bad dates (not a calendar day, year outside 1-9999) give 400 `validation_error`.
 */
export async function listHistory(
  db: DbOrTrx,
  accountId: number,
  query: HistoryQuery,
): Promise<{ entries: HistoryEntryWithLead[]; totalCount: number; limit: number; offset: number }> {
  const filter = parseHistoryFilter({ ...query }, QUERY_STYLE);
  const limit = Number(query.limit ?? DEFAULT_LIMIT);
  const offset = Number(query.offset ?? 0);
  const page = await findHistoryPage(db, accountId, filter, { limit, offset });
  return { entries: await withLeads(db, page.entries), totalCount: page.totalCount, limit, offset };
}

/** The tracking ids of every matching entry of the account, newest export first. */
export async function listHistoryIds(db: DbOrTrx, accountId: number, query: HistoryQuery): Promise<number[]> {
  return findHistoryIds(db, accountId, parseHistoryFilter({ ...query }, QUERY_STYLE));
}
