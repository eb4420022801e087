import { countFailures, nextAttempt, type DeliverDeps } from "./attempts.js";
import { batchEventId, batchLeads } from "./batches.js";
import type { ExportLeadsStoredData, StoredBatchSummary } from "./delivery.js";
import {
  CLAIM_LEASE_SECONDS,
  deactivateSubscription,
  noteSuccess,
  recordAttempt,
  wakeClaimerAt,
  type ClaimedDelivery,
} from "./repository.js";
import { envelopeFor, sendEnvelope } from "./send.js";

/**
 * Sends the batches of a claimed `export.leads` delivery in order, from the first not yet sent,
 * recording each batch as it goes (and renewing the claim's lease while batches remain). A batch
 * that fails is retried on the schedule; when its attempts run out the delivery stops there
 * (`stopped`; the rest is not sent) and a retry of the delivery queues the unsent batches again.
 */
export async function sendBatches(deps: DeliverDeps, delivery: ClaimedDelivery): Promise<void> {
  const { integration } = delivery;
  const data = JSON.parse(delivery.dataJson) as ExportLeadsStoredData;
  let summary: StoredBatchSummary = delivery.batchSummary ?? {
    exportId: data.exportId,
    batchCount: 1,
    batchesSent: 0,
    batchesFailed: 0,
    leadCount: data.leads.length,
    leadsSent: 0,
    currentBatchAttempts: 0,
  };
  while (summary.batchesSent < summary.batchCount) {
    const index = summary.batchesSent + 1;
    const batch = await batchLeads(deps.db, data, index);
    const envelope = envelopeFor(integration, {
      id: batchEventId(delivery.eventId, index),
      type: "export.leads",
      occurredAt: delivery.occurredAt,
      data: {
        exportId: data.exportId,
        batchIndex: index,
        batchCount: summary.batchCount,
        totalLeads: summary.leadCount,
        leads: batch.leads,
      },
    });
    const outcome = await sendEnvelope(deps.outbound, integration, delivery.targetUrl, envelope);
    const before: StoredBatchSummary = summary;
    const finishedAll = outcome.ok && index === summary.batchCount;
    summary = outcome.ok
      ? { ...before, batchesSent: index, leadsSent: before.leadsSent + batch.count, currentBatchAttempts: 0 }
      : { ...before, currentBatchAttempts: before.currentBatchAttempts + 1 };
    const next = outcome.ok ? null : nextAttempt(deps, summary.currentBatchAttempts, outcome);
    const stopped = !outcome.ok && next === null;
    if (stopped) summary = { ...summary, batchesFailed: summary.batchCount - summary.batchesSent };
    const leaseEnd = new Date(Date.now() + CLAIM_LEASE_SECONDS * 1000);
    await deps.db.transaction().execute(async (trx) => {
      await recordAttempt(trx, delivery.id, {
        status: finishedAll ? "success" : stopped ? "stopped" : "queued",
        statusCode: outcome.statusCode,
        latencyMs: outcome.latencyMs,
        errorMessage: outcome.error,
        responseBody: outcome.responseBody,
        completed: finishedAll || stopped,
        // Batches left after a success: still held by this claimer.
        nextAttemptAt: next ?? (outcome.ok && !finishedAll ? leaseEnd : null),
        batchSummary: summary,
      });
      if (outcome.ok) {
        await noteSuccess(trx, integration.id, false);
        return;
      }
      if (next) await wakeClaimerAt(trx, next);
      if (outcome.statusCode === 410 && delivery.subscriptionId !== null) {
        await deactivateSubscription(trx, delivery.subscriptionId);
      }
      await countFailures(trx, integration, 1);
    });
    if (!outcome.ok) return;
  }
}
