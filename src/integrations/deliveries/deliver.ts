import type { Logger } from "pino";
import type { Db, Trx } from "../../db/database.js";
import type { Outbound } from "../../outbound/index.js";
import { recordOwnerNotice } from "../owner-notices.js";
import { batchEventId, batchLeads } from "./batches.js";
import type { Delivery, DeliveryIntegration, ExportLeadsStoredData, StoredBatchSummary } from "./delivery.js";
import {
  deactivateSubscription,
  findDeliveryToSend,
  finishUnsent,
  noteFailure,
  noteSuccess,
  parkUnlessConnected,
  queueAttempt,
  recordAttempt,
} from "./repository.js";
import { nextAttemptDelayMs, RETRY_DELAYS_MS } from "./schedule.js";
import { envelopeFor, sendEnvelope, type SendOutcome } from "./send.js";

/** What the delivery worker needs. */
export interface DeliverDeps {
  db: Db;
  outbound: Outbound;
  logger: Logger;
  /** The retry schedule (schedule.ts); tests shorten it. */
  retryDelaysMs?: readonly number[];
}

/**
 * One attempt of an automatic delivery (the `integrations__deliver` task). The attempt and what
 * follows from it (the next attempt's job, the integration's failure count, a 410's
 * subscription) are written in one transaction; a worker that dies before it leaves the job to
 * run again, with the same event id. A job whose delivery is finished, or due later (its next
 * job exists), does nothing.
 */
export async function deliverOnce(deps: DeliverDeps, deliveryId: number): Promise<void> {
  const found = await findDeliveryToSend(deps.db, deliveryId);
  if (!found) return;
  const { delivery, integration } = found;
  if (delivery.status !== "pending" && delivery.status !== "queued") return;
  if (delivery.nextAttemptAt && delivery.nextAttemptAt.getTime() > Date.now() + 1_000) return;
  if (found.subscriptionActive !== true) {
    await finishWithoutSubscription(deps.db, delivery);
    return;
  }
  if (integration.status !== "connected") {
    const parked = await deps.db
      .transaction()
      .execute((trx) => parkUnlessConnected(trx, delivery.id, integration.id));
    if (parked) return;
  }
  if (delivery.eventType === "export.leads") {
    await sendBatches(deps, delivery, integration);
    return;
  }
  const envelope = envelopeFor(integration, {
    id: delivery.eventId,
    type: delivery.eventType,
    occurredAt: delivery.occurredAt,
    data: delivery.data,
  });
  const outcome = await sendEnvelope(deps.outbound, integration, delivery.targetUrl, envelope);
  await deps.db.transaction().execute(async (trx) => {
    const attempts = delivery.attemptCount + 1;
    const next = outcome.ok ? null : nextAttempt(deps, attempts, outcome);
    await recordAttempt(trx, delivery.id, {
      status: outcome.ok ? "success" : next ? "pending" : "failed",
      statusCode: outcome.statusCode,
      latencyMs: outcome.latencyMs,
      errorMessage: outcome.error,
      responseBody: outcome.responseBody,
      completed: next === null,
      nextAttemptAt: next,
    });
    await afterAttempt(trx, delivery, integration, outcome, next);
  });
}

/** When the next attempt is due after `attempts` failed ones; null after the last, or for a 410. */
function nextAttempt(deps: DeliverDeps, attempts: number, outcome: SendOutcome): Date | null {
  if (outcome.statusCode === 410) return null;
  const delay = nextAttemptDelayMs(
    attempts,
    outcome.retryAfterSeconds,
    deps.retryDelaysMs ?? RETRY_DELAYS_MS,
  );
  return delay === null ? null : new Date(Date.now() + delay);
}

/** The bookkeeping of an attempt: success or failure count, the next job, a 410's subscription. */
async function afterAttempt(
  trx: Trx,
  delivery: Delivery,
  integration: DeliveryIntegration,
  outcome: SendOutcome,
  next: Date | null,
): Promise<void> {
  if (outcome.ok) {
    await noteSuccess(trx, integration.id, false);
    return;
  }
  if (next) await queueAttempt(trx, delivery.id, next);
  if (outcome.statusCode === 410 && delivery.subscriptionId !== null) {
    await deactivateSubscription(trx, delivery.subscriptionId);
  }
  if (await noteFailure(trx, integration.id)) {
    await recordOwnerNotice(trx, {
      accountId: integration.accountId,
      kind: "alert",
      summary:
        `Integration ${integration.id} (${integration.provider}) failed 5 deliveries in a row and ` +
        `now needs attention: nothing is sent to it until it is set back to connected ` +
        `(PATCH /api/v1/integrations/${integration.id} with {"status": "connected"}). Its deliveries ` +
        `are listed at GET /api/v1/integrations/${integration.id}/deliveries.`,
    });
  }
}

/** A delivery whose subscription was removed or turned off is not sent. */
async function finishWithoutSubscription(db: Db, delivery: Delivery): Promise<void> {
  const message = "The subscription was removed or deactivated before the event was sent.";
  const summary = delivery.batchSummary;
  if (!summary) {
    await finishUnsent(db, delivery.id, "failed", message);
    return;
  }
  const status = summary.batchesSent === 0 ? "not_sent" : "stopped";
  await finishUnsent(db, delivery.id, status, message, {
    ...summary,
    batchesFailed: summary.batchCount - summary.batchesSent,
  });
}

/**
 * Sends the batches of an `export.leads` delivery in order, from the first not yet sent. A batch
 * that fails is retried on the schedule; when its attempts run out the delivery stops there
 * (`stopped`; the rest is not sent) and a retry of the delivery queues the unsent batches again.
 */
async function sendBatches(
  deps: DeliverDeps,
  delivery: Delivery,
  integration: DeliveryIntegration,
): Promise<void> {
  const data = delivery.data as ExportLeadsStoredData;
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
    await deps.db.transaction().execute(async (trx) => {
      await recordAttempt(trx, delivery.id, {
        status: finishedAll ? "success" : stopped ? "stopped" : "queued",
        statusCode: outcome.statusCode,
        latencyMs: outcome.latencyMs,
        errorMessage: outcome.error,
        responseBody: outcome.responseBody,
        completed: finishedAll || stopped,
        nextAttemptAt: next,
        batchSummary: summary,
      });
      await afterAttempt(trx, delivery, integration, outcome, next);
    });
    if (!outcome.ok) return;
  }
}
