import type { Task } from "graphile-worker";
import type { Logger } from "pino";
import type { Db } from "../../db/database.js";
import { collectOverage } from "../collect-overage.js";
import type { PaymentProcessor } from "../processor.js";

export const COLLECT_OVERAGE_TASK = "billing__collect_overage";

/** Once a day at 06:00 UTC. */
export const COLLECT_OVERAGE_CRONTAB = `0 6 * * * ${COLLECT_OVERAGE_TASK}\n`;

/**
 * `billing__collect_overage`: the daily collection of accrued overage (collect-overage.ts). Without
 * a payment processor configured there is nothing to charge with: it does nothing.
 */
export function billingCollectOverage(deps: {
  db: Db;
  processor: PaymentProcessor | undefined;
  logger: Logger;
}): Task {
  return async () => {
    if (!deps.processor) return;
    await collectOverage(deps.db, deps.processor, deps.logger);
  };
}
