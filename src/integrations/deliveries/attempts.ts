import type { Logger } from "pino";
import type { Db, Trx } from "../../db/database.js";
import type { Outbound } from "../../outbound/index.js";
import { recordOwnerNotice } from "../owner-notices.js";
import type { DeliveryIntegration } from "./delivery.js";
import type { CrmDeps } from "../crm/runtime.js";
import { noteFailure } from "./repository.js";
import { nextAttemptDelayMs, RETRY_DELAYS_MS } from "./schedule.js";
import type { SendOutcome } from "./send.js";

/** What the delivery worker needs. */
export interface DeliverDeps {
  db: Db;
  outbound: Outbound;
  logger: Logger;
  /** The retry schedule (schedule.ts); tests shorten it. */
  retryDelaysMs?: readonly number[];
  /** Attempts one claimer has on the wire at once (default `SEND_CONCURRENCY`). */
  sendConcurrency?: number;
  /** The CRMs of this deployment (deliveries of CRM integrations go through their adapters). */
  crm?: CrmDeps["config"];
}

/** When the next attempt is due after `attempts` failed ones; null after the last, or for a 410. */
export function nextAttempt(deps: DeliverDeps, attempts: number, outcome: SendOutcome): Date | null {
  if (outcome.statusCode === 410) return null;
  const delay = nextAttemptDelayMs(
    attempts,
    outcome.retryAfterSeconds,
    deps.retryDelaysMs ?? RETRY_DELAYS_MS,
  );
  return delay === null ? null : new Date(Date.now() + delay);
}

/** Counts failures in a row; the owner hears of it when the integration now needs attention. */
export async function countFailures(
  trx: Trx,
  integration: DeliveryIntegration,
  failures: number,
): Promise<void> {
  if (!(await noteFailure(trx, integration.id, failures))) return;
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
