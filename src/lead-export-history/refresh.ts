import { sql } from "kysely";
import type { Trx } from "../db/database.js";
import { emitLeadEvents } from "../events/outbox.js";
import type { LeadEventSource } from "../events/types.js";
import { blacklistedDomains, isLeadBlacklisted } from "../export-blacklist/match.js";
import { toLeadSnapshot, type LeadSnapshot } from "../leads/snapshot.js";
import { LEAD_VERSION_LOCK } from "../leads/versions.js";
import {
  lockEntries,
  readRefreshState,
  updateRefreshedEntries,
  type RefreshedEntry,
} from "./refresh-repository.js";
import type { HistoryEntry } from "./repository.js";

/** The outcome of refreshing one tracking id. */
export interface RefreshResult {
  id: number;
  leadId: number | null;
  /** Updated since the snapshot, by its last-updated date. */
  changed: boolean;
  /** Snapshot keys found changed, kept until a refresh-and-export clears them. */
  changedFields: string[];
  refreshed: boolean;
  /** The entry's lead data after the refresh (snapshot form), null when not refreshed. */
  lead: LeadSnapshot | null;
}

export interface RefreshOutcome {
  results: RefreshResult[];
  refreshed: number;
}

/** Whether two snapshot values are the same data (a missing value is null; lists and maps by content). */
function sameValue(a: unknown, b: unknown): boolean {
  const x = a ?? null;
  const y = b ?? null;
  if (x === y) return true;
  if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) return false;
  return JSON.stringify(x) === JSON.stringify(y);
}

/** The keys of two snapshots whose values differ, in field order (the later snapshot's keys first). */
export function changedKeys(before: LeadSnapshot, after: LeadSnapshot): string[] {
  const changed: string[] = [];
  for (const key in after) if (!sameValue(before[key], after[key])) changed.push(key);
  for (const key in before) if (!(key in after) && !sameValue(before[key], null)) changed.push(key);
  return changed;
}

/** How a lead reached the account, as lead events name it (they know no `enrichment`). */
function eventSource(entry: HistoryEntry): LeadEventSource {
  return (entry.exportMethod === "enrichment" ? "api" : entry.exportMethod) as LeadEventSource;
}

/**
 * Refreshes the account's entries among `trackingIds` in the caller's transaction: each entry
 * whose lead is still stored now names the lead's current version (its snapshot), with `changed`
 * (the lead's last-updated date is later than the snapshot's) and the changed fields added to
 * those kept; one `lead.updated` per lead whose data is newer than the snapshot goes to the
 * subscribed integrations, unless the lead is on the account's export blacklist. Results follow
 * `trackingIds`; `clearChangedFields` drops the kept fields instead (refresh-and-export).
 *
 * The delivered data is the copy of an older entry (compared here), else the version it names,
 * compared with the current one in PostgreSQL (readRefreshState); an entry with neither (a version
 * nobody kept) compares by date only. Refresh-and-export reads the leads' data only for copies.
 *
 * Holds LEAD_VERSION_LOCK shared like recordDeliveredLeads (src/leads/versions.ts), so a version
 * the entries are made to name is current or kept by a concurrent change.
 */
export async function refreshEntries(
  trx: Trx,
  accountId: number,
  trackingIds: readonly number[],
  options: { clearChangedFields: boolean } = { clearChangedFields: false },
): Promise<RefreshOutcome> {
  await sql`select pg_advisory_xact_lock_shared(${sql.lit(LEAD_VERSION_LOCK)})`.execute(trx);
  const entries = await lockEntries(trx, accountId, trackingIds);
  // A refresh answers every entry's data; refresh-and-export (which clears the changed fields and
  // answers a file) reads the data only of entries holding a copied snapshot, to compare with it.
  const withLeads = !options.clearChangedFields;
  const state = await readRefreshState(
    trx,
    entries.map((e) => ({
      leadId: e.leadId,
      leadVersion: e.leadSnapshot === null ? e.leadVersion : null,
      withData: withLeads || e.leadSnapshot !== null,
    })),
  );
  const blacklist = await blacklistedDomains(trx, accountId);
  const byId = new Map<number, RefreshResult>();
  const updates: RefreshedEntry[] = [];
  const events = new Map<LeadEventSource, { leadId: number; version: number }[]>();
  for (const entry of entries) {
    const read = state.get(entry.leadId);
    if (!read) {
      byId.set(entry.id, {
        id: entry.id,
        leadId: entry.leadId,
        changed: false,
        changedFields: entry.lastChangedFields ?? [],
        refreshed: false,
        lead: null,
      });
      continue;
    }
    const fresh = read.lead ? toLeadSnapshot(read.lead) : null;
    // What changed since delivery: against a copied snapshot here; against the version the entry
    // names in PostgreSQL (none when it names the current one); unknown without either (compared
    // by date only).
    const copied = entry.leadSnapshot;
    const diff = copied !== null ? (fresh ? changedKeys(copied, fresh) : []) : (read.changedSinceEntry ?? []);
    const unknown = copied === null && read.changedSinceEntry === null;
    const { lastUpdated } = read;
    const changed =
      entry.leadLastUpdated === null
        ? diff.length > 0 || (unknown && lastUpdated !== null)
        : lastUpdated !== null && lastUpdated.getTime() > entry.leadLastUpdated.getTime();
    const keptFields = options.clearChangedFields ? [] : mergeFields(entry.lastChangedFields ?? [], diff);
    const update: RefreshedEntry = {
      entryId: entry.id,
      version: read.version,
      lastUpdated,
      changedFields:
        keptFields.length > 0 ? keptFields : options.clearChangedFields ? null : entry.lastChangedFields,
    };
    // An entry already up to date is not written again.
    if (!isUpToDate(entry, update)) updates.push(update);
    const newer = diff.length > 0 || (unknown && changed);
    if (newer && !isLeadBlacklisted(blacklist, read)) {
      const list = events.get(eventSource(entry)) ?? [];
      list.push({ leadId: entry.leadId, version: read.version });
      events.set(eventSource(entry), list);
    }
    byId.set(entry.id, {
      id: entry.id,
      leadId: entry.leadId,
      changed,
      changedFields: keptFields,
      refreshed: true,
      lead: withLeads ? fresh : null,
    });
  }
  await updateRefreshedEntries(trx, accountId, updates);
  for (const [source, leads] of events) {
    await emitLeadEvents(trx, { accountId, type: "lead.updated", source, leads });
  }
  const results = trackingIds.map(
    (id): RefreshResult =>
      byId.get(id) ?? { id, leadId: null, changed: false, changedFields: [], refreshed: false, lead: null },
  );
  return { results, refreshed: results.filter((r) => r.refreshed).length };
}

/** Whether an entry already holds what a refresh would write. */
function isUpToDate(entry: HistoryEntry, update: RefreshedEntry): boolean {
  return (
    entry.leadSnapshot === null &&
    entry.leadVersion === update.version &&
    (entry.leadLastUpdated?.getTime() ?? null) === (update.lastUpdated?.getTime() ?? null) &&
    JSON.stringify(entry.lastChangedFields) === JSON.stringify(update.changedFields)
  );
}

function mergeFields(kept: readonly string[], found: readonly string[]): string[] {
  return [...new Set([...kept, ...found])];
}
