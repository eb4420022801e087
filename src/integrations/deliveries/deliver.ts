import type { Db, Trx } from "../../db/database.js";
import { countFailures, nextAttempt, type DeliverDeps } from "./attempts.js";
import { sendBatches } from "./batch-delivery.js";
import {
  CLAIM_SIZE,
  claimDueDeliveries,
  deactivateSubscription,
  finishUnsent,
  noteSuccess,
  parkUnlessConnected,
  recordAttempts,
  wakeClaimerAt,
  type AttemptRecord,
  type ClaimedDelivery,
} from "./repository.js";
import { envelopeJson, sendEnvelopeJson, type SendOutcome } from "./send.js";
import { isCrmProvider } from "../providers.js";
import { usableCrm } from "../crm/availability.js";
import { crmRuntime } from "../crm/runtime.js";
import { sendToCrm } from "../crm/send.js";

/** Attempts one claimer has on the wire at once. */
export const SEND_CONCURRENCY = 16;
/** How long one claimer job keeps claiming before it hands the rest to a fresh job. */
const CLAIMER_BUDGET_MS = 30_000;

/**
 * The `integrations__deliver` task: claims due deliveries (`CLAIM_SIZE` at a time, skipping those
 * other claimers hold), sends them, and records the attempts of each claim in one transaction,
 * until none is due. Retries are due later and wake a claimer then; the minute's sweep
 * (worker.ts) takes what a claimer that died left behind once its lease runs out.
 */
export async function deliverDue(deps: DeliverDeps, signal?: AbortSignal): Promise<void> {
  const started = Date.now();
  for (;;) {
    const claimed = await claimDueDeliveries(deps.db, CLAIM_SIZE);
    if (claimed.length > 0) await deliverClaimed(deps, claimed);
    if (claimed.length < CLAIM_SIZE) return;
    if (signal?.aborted || Date.now() - started > CLAIMER_BUDGET_MS) {
      await wakeClaimerAt(deps.db, new Date());
      return;
    }
  }
}

/** One attempt's result, on its way to the claim's record. */
interface Attempted {
  delivery: ClaimedDelivery;
  outcome: SendOutcome;
  record: AttemptRecord & { id: number };
  /** A CRM's 429: waited out, not a failure (never counted toward `needs_attention`). */
  rateLimited?: boolean;
}

/** Sends one claim's deliveries, `sendConcurrency` at a time, and records them. */
async function deliverClaimed(deps: DeliverDeps, claimed: ClaimedDelivery[]): Promise<void> {
  const attempted: Attempted[] = [];
  let next = 0;
  const lanes = Math.min(claimed.length, deps.sendConcurrency ?? SEND_CONCURRENCY);
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < claimed.length) {
        const delivery = claimed[next]!;
        next += 1;
        const done = await attemptOne(deps, delivery);
        if (done) attempted.push(done);
      }
    }),
  );
  if (attempted.length === 0) return;
  await deps.db.transaction().execute(async (trx) => {
    await recordAttempts(
      trx,
      attempted.map((a) => a.record),
    );
    await afterAttempts(trx, attempted);
    const retries = attempted.flatMap((a) => (a.record.nextAttemptAt ? [a.record.nextAttemptAt] : []));
    if (retries.length > 0) {
      await wakeClaimerAt(trx, new Date(Math.min(...retries.map((d) => d.getTime()))));
    }
  });
}

/**
 * Sends one claimed delivery. Answers its attempt to record with the claim, or undefined when it
 * was finished or parked on its own (no subscription, integration not connected, a batched
 * `export.leads` delivery, which records each batch as it goes).
 */
async function attemptOne(deps: DeliverDeps, delivery: ClaimedDelivery): Promise<Attempted | undefined> {
  const { integration } = delivery;
  if (delivery.subscriptionActive !== true) {
    await finishWithoutSubscription(deps.db, delivery);
    return undefined;
  }
  if (integration.status !== "connected") {
    const parked = await deps.db
      .transaction()
      .execute((trx) => parkUnlessConnected(trx, delivery.id, integration.id));
    if (parked) return undefined;
  }
  if (isCrmProvider(integration.provider)) return attemptCrm(deps, delivery);
  if (delivery.eventType === "export.leads") {
    await sendBatches(deps, delivery);
    return undefined;
  }
  const body = envelopeJson(
    integration,
    { id: delivery.eventId, type: delivery.eventType, occurredAt: delivery.occurredAt },
    delivery.dataJson,
  );
  const outcome = await sendEnvelopeJson(
    deps.outbound,
    integration,
    delivery.targetUrl,
    delivery.eventType,
    body,
  );
  const next = outcome.ok ? null : nextAttempt(deps, delivery.attemptCount + 1, outcome);
  return {
    delivery,
    outcome,
    record: {
      id: delivery.id,
      status: outcome.ok ? "success" : next ? "pending" : "failed",
      statusCode: outcome.statusCode,
      latencyMs: outcome.latencyMs,
      errorMessage: outcome.error,
      responseBody: outcome.responseBody,
      completed: next === null,
      nextAttemptAt: next,
    },
  };
}

/**
 * One write of a delivery to a CRM through its adapter, attempted once: a success or a failure
 * finishes it, and a CRM's 429 puts it back in the queue for when the CRM's hint says (not a
 * failure, so a rate limit never loses a delivery).
 */
async function attemptCrm(deps: DeliverDeps, delivery: ClaimedDelivery): Promise<Attempted> {
  const { integration } = delivery;
  const runtime =
    deps.crm && isCrmProvider(integration.provider) && usableCrm(deps.crm.crm, integration.provider)
      ? crmRuntime({ db: deps.db, outbound: deps.outbound, config: deps.crm })
      : undefined;
  const { outcome } = await sendToCrm(runtime, integration, JSON.parse(delivery.dataJson) as unknown);
  const rateLimited = !outcome.ok && outcome.statusCode === 429;
  const waitMs = Math.max(1, outcome.retryAfterSeconds ?? 10) * 1000;
  return {
    delivery,
    outcome,
    rateLimited,
    record: {
      id: delivery.id,
      status: outcome.ok ? "success" : rateLimited ? "pending" : "failed",
      statusCode: outcome.statusCode,
      latencyMs: outcome.latencyMs,
      errorMessage: outcome.error,
      responseBody: outcome.responseBody,
      completed: !rateLimited,
      nextAttemptAt: rateLimited ? new Date(Date.now() + waitMs) : null,
    },
  };
}

/**
 * The bookkeeping of a claim's attempts, per integration in the order they ended: a success
 * resets the failure count, the failures after the last success count in a row (the fifth moves
 * the integration to `needs_attention`), and a 410 turns its subscription off.
 */
async function afterAttempts(trx: Trx, attempted: readonly Attempted[]): Promise<void> {
  const byIntegration = new Map<number, Attempted[]>();
  for (const a of attempted) {
    if (a.rateLimited) continue;
    const list = byIntegration.get(a.delivery.integration.id) ?? [];
    list.push(a);
    byIntegration.set(a.delivery.integration.id, list);
  }
  for (const [integrationId, list] of byIntegration) {
    const lastSuccess = list.findLastIndex((a) => a.outcome.ok);
    if (lastSuccess >= 0) await noteSuccess(trx, integrationId, false);
    const trailingFailures = list.length - 1 - lastSuccess;
    if (trailingFailures > 0) await countFailures(trx, list[0]!.delivery.integration, trailingFailures);
    for (const a of list) {
      if (a.outcome.statusCode === 410 && a.delivery.subscriptionId !== null) {
        await deactivateSubscription(trx, a.delivery.subscriptionId);
      }
    }
  }
}

/** A delivery whose subscription was removed or turned off is not sent. */
async function finishWithoutSubscription(db: Db, delivery: ClaimedDelivery): Promise<void> {
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
