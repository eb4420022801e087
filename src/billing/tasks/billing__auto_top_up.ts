import type { Task } from "graphile-worker";
import type { Logger } from "pino";
import { AUTO_TOP_UP_TASK } from "../../credits/charge.js";
import type { Db } from "../../db/database.js";
import { runAutoTopUp } from "../auto-top-up/purchase.js";
import type { PaymentProcessor } from "../processor.js";

export { AUTO_TOP_UP_TASK };

/** The job's payload, checked at run time (old jobs outlive code). */
function accountIdOf(payload: unknown): number | undefined {
  const id = (payload as { accountId?: unknown } | null)?.accountId;
  return typeof id === "number" && Number.isInteger(id) && id > 0 ? id : undefined;
}

/**
 * `billing__auto_top_up`: the purchase a charge claimed (src/billing/auto-top-up/purchase.ts), queued
 * in the charge's transaction with the job key `billing__auto_top_up:<account>`. Without a payment
 * processor configured it leaves the claim as it is (nothing can be charged; the claim is queued
 * again an hour later by the next charge). An unreachable processor throws: graphile-worker
 * retries the job, which charges with the same idempotency key.
 */
export function billingAutoTopUp(deps: {
  db: Db;
  processor: PaymentProcessor | undefined;
  logger: Logger;
  retryDelayMs?: number;
}): Task {
  return async (payload) => {
    const accountId = accountIdOf(payload);
    if (accountId === undefined || !deps.processor) return;
    const result = await runAutoTopUp(deps.db, deps.processor, accountId, {
      retryDelayMs: deps.retryDelayMs,
    });
    if (result.outcome !== "nothing") deps.logger.info({ accountId, ...result }, "auto top-up");
  };
}
