import type { JsonBody } from "../http/contract.js";
import type { RefreshOutcome } from "./refresh.js";
import type { HistoryEntryWithLead } from "./service.js";

export type HistoryEntryBody = JsonBody<"listLeadExportHistory", 200>["data"][number];

/** The API's shape of a lead export history entry (dates in UTC). */
export function toHistoryEntryBody({ entry, snapshot, lead }: HistoryEntryWithLead): HistoryEntryBody {
  return {
    id: entry.id,
    userId: entry.accountId,
    leadId: entry.leadId,
    databaseType: entry.databaseType as HistoryEntryBody["databaseType"],
    exportedAt: entry.exportedAt.toISOString(),
    exportMethod: entry.exportMethod as HistoryEntryBody["exportMethod"],
    leadLastUpdated: entry.leadLastUpdated?.toISOString() ?? null,
    // Free-form objects: the generated type of `Record<unknown>` is `Record<string, never>`.
    leadSnapshot: snapshot as HistoryEntryBody["leadSnapshot"],
    lead: lead as HistoryEntryBody["lead"],
    lastChangedFields: entry.lastChangedFields,
  };
}

export type RefreshResultBody = JsonBody<"refreshLeadExportHistory", 200>["data"];

/** The `{results, refreshed}` of a refresh (lead data in the snapshot form). */
export function refreshResultBody(outcome: RefreshOutcome): RefreshResultBody {
  return {
    results: outcome.results.map((r) => ({
      id: r.id,
      leadId: r.leadId,
      changed: r.changed,
      changedFields: r.changedFields,
      refreshed: r.refreshed,
      // Free-form object: the generated type of `Record<unknown>` is `Record<string, never>`.
      lead: r.lead as RefreshResultBody["results"][number]["lead"],
    })),
    refreshed: outcome.refreshed,
  };
}
