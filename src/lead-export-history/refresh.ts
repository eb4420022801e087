import { sql } from "kysely";
import type { Trx } from "../db/database.js";
import { emitLeadEvents } from "../events/outbox.js";
import type { LeadEventSource } from "../events/types.js";
import { blacklistedDomains, isLeadBlacklisted } from "../export-blacklist/match.js";
import { toLeadSnapshot, type LeadSnapshot } from "../leads/snapshot.js";
import { LEAD_VERSION_LOCK } from "../leads/versions.js";
import {
  findKeptVersions,
  findLiveLeads,
  lockEntries,
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
 * The delivered data is the copy of an older entry, else the version it names (a kept version when
 * the lead changed since); an entry with neither (a version nobody kept) compares by date only.
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
  const live = await findLiveLeads(
    trx,
    entries.map((e) => e.leadId),
  );
  // The delivered data is read only where it can differ from the live lead: an entry at the
  // lead's current version has nothing newer.
  const stale = entries.filter(
    (e) => e.leadSnapshot === null && e.leadVersion !== null && e.leadVersion !== live.get(e.leadId)?.version,
  );
  const kept = await findKeptVersions(
    trx,
    stale.map((e) => ({ leadId: e.leadId, version: e.leadVersion as number })),
  );
  const deliveredOf = (entry: HistoryEntry, fresh: LeadSnapshot): LeadSnapshot | null => {
    if (entry.leadSnapshot !== null) return entry.leadSnapshot;
    if (entry.leadVersion === null) return null;
    if (entry.leadVersion === live.get(entry.leadId)?.version) return fresh;
    const old = kept.get(`${entry.leadId}:${entry.leadVersion}`);
    return old ? toLeadSnapshot(old) : null;
  };
  const blacklist = await blacklistedDomains(trx, accountId);
  const byId = new Map<number, RefreshResult>();
  const updates: RefreshedEntry[] = [];
  const events = new Map<LeadEventSource, { leadId: number; version: number }[]>();
  for (const entry of entries) {
    const current = live.get(entry.leadId);
    if (!current) {
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
    const fresh = toLeadSnapshot(current.lead);
    const before = deliveredOf(entry, fresh);
    const diff = before ? changedKeys(before, fresh) : [];
    const lastUpdated = current.lead.lastUpdated;
    const changed =
      entry.leadLastUpdated === null
        ? diff.length > 0 || (before === null && lastUpdated !== null)
        : lastUpdated !== null && lastUpdated.getTime() > entry.leadLastUpdated.getTime();
    const kept = options.clearChangedFields ? [] : mergeFields(entry.lastChangedFields ?? [], diff);
    const update: RefreshedEntry = {
      entryId: entry.id,
      version: current.version,
      lastUpdated,
      changedFields: kept.length > 0 ? kept : options.clearChangedFields ? null : entry.lastChangedFields,
    };
    // An entry already up to date is not written again.
    if (!isUpToDate(entry, update)) updates.push(update);
    const newer = diff.length > 0 || (before === null && changed);
    if (newer && !isLeadBlacklisted(blacklist, current.lead)) {
      const list = events.get(eventSource(entry)) ?? [];
      list.push({ leadId: entry.leadId, version: current.version });
      events.set(eventSource(entry), list);
    }
    byId.set(entry.id, {
      id: entry.id,
      leadId: entry.leadId,
      changed,
      changedFields: kept,
      refreshed: true,
      lead: fresh,
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
