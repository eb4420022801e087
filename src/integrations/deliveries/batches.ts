import type { DbOrTrx } from "../../db/database.js";
import { findLeadVersions, leadVersionKey } from "../../leads/versions.js";
import { toLeadSummary, type LeadSummary } from "../../leads/summary.js";
import { EXPORT_LEADS_BATCH_SIZE, type ExportLeadsStoredData, type StoredBatchSummary } from "./delivery.js";

/** A fresh summary of a batched delivery of `leadCount` leads. */
export function newBatchSummary(exportId: string, leadCount: number): StoredBatchSummary {
  return {
    exportId,
    batchCount: Math.max(1, Math.ceil(leadCount / EXPORT_LEADS_BATCH_SIZE)),
    batchesSent: 0,
    batchesFailed: 0,
    leadCount,
    leadsSent: 0,
    currentBatchAttempts: 0,
  };
}

/** The leads of batch `index` (1-based), at the versions the account received. */
export async function batchLeads(
  db: DbOrTrx,
  data: ExportLeadsStoredData,
  index: number,
): Promise<{ leads: LeadSummary[]; count: number }> {
  const pairs = data.leads.slice((index - 1) * EXPORT_LEADS_BATCH_SIZE, index * EXPORT_LEADS_BATCH_SIZE);
  const refs = pairs.map(([leadId, version]) => ({ leadId, version }));
  const versions = await findLeadVersions(db, refs);
  const source = data.source as LeadSummary["source"];
  const leads: LeadSummary[] = [];
  for (const ref of refs) {
    const lead = versions.get(leadVersionKey(ref));
    if (lead) leads.push(toLeadSummary(lead, source));
  }
  return { leads, count: pairs.length };
}

/** The event id of one batch: the delivery's event id with the batch number, stable across attempts. */
export function batchEventId(eventId: string, index: number): string {
  return `${eventId}b${index}`;
}
