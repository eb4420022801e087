import type { Trx } from "../../db/database.js";
import { answerWriter, type ClaimNotes } from "./answers.js";
import { countFailures, nextAttempt, type DeliverDeps } from "./attempts.js";
import { sendBatches } from "./batch-delivery.js";
import {
  CLAIM_SIZE,
  deactivateSubscription,
  finishUnsent,
  leaseDeliveries,
  lockDueDeliveries,
  noteSuccess,
  parkUnlessConnected,
  recordAttempts,
  wakeClaimerAt,
  wakeClaimerForNextDue,
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
 * How long a claim starts new attempts: what is not started by then is released when the claim
 * commits, so a slow receiver holds a claim's rows for at most this plus one attempt (8 s).
 */
const CLAIM_SEND_BUDGET_MS = 2_000;

/**
 * The `integrations__deliver` task: claims due deliveries (`CLAIM_SIZE` at a time, skipping those
 * other claimers hold), sends them, and records the attempts of each claim, until none is due.
 * Retries are due later and wake a claimer then; the minute's sweep (worker.ts) takes what a
 * wake-up missed, and a batched delivery whose claimer died once its lease runs out.
 */
export async function deliverDue(deps: DeliverDeps, signal?: AbortSignal): Promise<void> {
  const started = Date.now();
  for (;;) {
    const claim = await deps.db.transaction().execute((trx) => deliverClaim(deps, trx));
    await afterClaim(deps, claim);
    if (claim.claimed < CLAIM_SIZE && claim.left === 0) {
      await wakeClaimerForNextDue(deps.db);
      return;
    }
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

/** What a claim leaves to do once it has committed. */
interface Claim {
  claimed: number;
  /** Claimed but not attempted (the claim's send budget ran out, or to park): due again at once. */
  left: number;
  attempted: Attempted[];
  /** Deliveries of integrations that were not connected, by integration: parked after the claim. */
  toPark: Map<number, number[]>;
  /** Batched `export.leads` deliveries, leased: sent batch by batch after the claim. */
  batched: ClaimedDelivery[];
}

/**
 * One claim, in the claimer's transaction: the due deliveries stay locked while they are sent,
 * and the attempts are recorded before it commits (one row update per delivery). The claim writes
 * only its own deliveries' rows (and the wake-up jobs of its retries): whatever an API request may
 * hold meanwhile (an integration being changed or deleted) is touched after it commits, so the two
 * never wait on each other in a circle. Each 2xx answer is also noted as it arrives, from another
 * connection (answers.ts): when the claim dies before its commit, the next claim records the
 * noted ones instead of sending them again.
 */
async function deliverClaim(deps: DeliverDeps, trx: Trx): Promise<Claim> {
  const claimed = await lockDueDeliveries(trx, CLAIM_SIZE);
  const claim: Claim = { claimed: claimed.length, left: 0, attempted: [], toPark: new Map(), batched: [] };
  const toSend: ClaimedDelivery[] = [];
  const answeredBefore: Attempted[] = [];
  for (const delivery of claimed) {
    const { integration } = delivery;
    if (delivery.answered) {
      answeredBefore.push(answeredAttempt(delivery, delivery.answered));
    } else if (delivery.subscriptionActive !== true) {
      await finishWithoutSubscription(trx, delivery);
    } else if (integration.status !== "connected") {
      const ids = claim.toPark.get(integration.id) ?? [];
      ids.push(delivery.id);
      claim.toPark.set(integration.id, ids);
    } else if (!isCrmProvider(integration.provider) && delivery.eventType === "export.leads") {
      claim.batched.push(delivery);
    } else {
      toSend.push(delivery);
    }
  }
  await leaseDeliveries(
    trx,
    claim.batched.map((d) => d.id),
  );
  const notes = answerWriter(deps.db, deps.logger).claim();
  const sent = await attemptAll(deps, toSend, notes);
  await notes.settle();
  claim.left = toSend.length - sent.length;
  claim.attempted = [...answeredBefore, ...sent];
  if (claim.attempted.length === 0) return claim;
  await recordAttempts(
    trx,
    claim.attempted.map((a) => a.record),
    [...answeredBefore.map((a) => a.delivery.id), ...notes.written],
  );
  const retries = claim.attempted.flatMap((a) => (a.record.nextAttemptAt ? [a.record.nextAttemptAt] : []));
  if (retries.length > 0) {
    await wakeClaimerAt(trx, new Date(Math.min(...retries.map((d) => d.getTime()))));
  }
  return claim;
}

/**
 * Sends deliveries, `sendConcurrency` at a time, starting none once the claim's send budget has
 * run out, and notes each 2xx answer as it arrives. Answers the attempts made, in the order they
 * ended.
 */
async function attemptAll(
  deps: DeliverDeps,
  deliveries: readonly ClaimedDelivery[],
  notes: ClaimNotes,
): Promise<Attempted[]> {
  const attempted: Attempted[] = [];
  const until = Date.now() + CLAIM_SEND_BUDGET_MS;
  await inLanes(
    deps,
    deliveries,
    async (delivery) => {
      const a = await attemptOne(deps, delivery);
      if (a.outcome.ok) {
        notes.note({
          id: delivery.id,
          attemptCount: delivery.attemptCount,
          statusCode: a.outcome.statusCode,
          latencyMs: a.outcome.latencyMs,
          responseBody: a.outcome.responseBody,
        });
      }
      attempted.push(a);
    },
    until,
  );
  return attempted;
}

/** A delivery whose 2xx answer a claim that died had noted: recorded as that success, not sent. */
function answeredAttempt(
  delivery: ClaimedDelivery,
  answer: NonNullable<ClaimedDelivery["answered"]>,
): Attempted {
  return {
    delivery,
    outcome: {
      ok: true,
      statusCode: answer.statusCode,
      latencyMs: answer.latencyMs,
      error: null,
      responseBody: answer.responseBody,
      retryAfterSeconds: null,
    },
    record: {
      id: delivery.id,
      status: "success",
      statusCode: answer.statusCode,
      latencyMs: answer.latencyMs,
      errorMessage: null,
      responseBody: answer.responseBody,
      completed: true,
      nextAttemptAt: null,
    },
  };
}

/**
 * Runs `each` over `items` in order, `sendConcurrency` at a time; none is started after `until`
 * (a time in ms) when given.
 */
async function inLanes<T>(
  deps: DeliverDeps,
  items: readonly T[],
  each: (item: T) => Promise<void>,
  until = Infinity,
): Promise<void> {
  let next = 0;
  const lanes = Math.min(items.length, deps.sendConcurrency ?? SEND_CONCURRENCY);
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < items.length && Date.now() < until) {
        const item = items[next]!;
        next += 1;
        await each(item);
      }
    }),
  );
}

/**
 * After a claim commits: the integrations' bookkeeping of its attempts, the parking of deliveries
 * of integrations that are not connected, and the batched deliveries it leased.
 */
async function afterClaim(deps: DeliverDeps, claim: Claim): Promise<void> {
  if (claim.attempted.length > 0) {
    await deps.db.transaction().execute((trx) => afterAttempts(trx, claim.attempted));
  }
  for (const [integrationId, ids] of claim.toPark) {
    const parked = await deps.db.transaction().execute((trx) => parkUnlessConnected(trx, integrationId, ids));
    // Connected again meanwhile: the rest are due and sent by the next claim.
    if (parked < ids.length) claim.left += ids.length - parked;
  }
  // As many at a time as a claim's attempts, well within their leases.
  await inLanes(deps, claim.batched, (delivery) => sendBatches(deps, delivery));
}

/** Sends one claimed delivery (to a webhook, or to a CRM through its adapter). */
async function attemptOne(deps: DeliverDeps, delivery: ClaimedDelivery): Promise<Attempted> {
  const { integration } = delivery;
  if (isCrmProvider(integration.provider)) return attemptCrm(deps, delivery);
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
 * The bookkeeping of a claim's attempts, per integration (in id order, so two claimers lock
 * integrations in the same order) and in the order its attempts ended: a success resets the failure
 * count, the failures after the last success count in a row (the fifth moves the integration to
 * `needs_attention`), and a 410 turns its subscription off.
 */
async function afterAttempts(trx: Trx, attempted: readonly Attempted[]): Promise<void> {
  const byIntegration = new Map<number, Attempted[]>();
  for (const a of attempted) {
    if (a.rateLimited) continue;
    const list = byIntegration.get(a.delivery.integration.id) ?? [];
    list.push(a);
    byIntegration.set(a.delivery.integration.id, list);
  }
  for (const [integrationId, list] of [...byIntegration].sort(([a], [b]) => a - b)) {
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
async function finishWithoutSubscription(trx: Trx, delivery: ClaimedDelivery): Promise<void> {
  const message = "The subscription was removed or deactivated before the event was sent.";
  const summary = delivery.batchSummary;
  if (!summary) {
    await finishUnsent(trx, delivery.id, "failed", message);
    return;
  }
  const status = summary.batchesSent === 0 ? "not_sent" : "stopped";
  await finishUnsent(trx, delivery.id, status, message, {
    ...summary,
    batchesFailed: summary.batchCount - summary.batchesSent,
  });
}
