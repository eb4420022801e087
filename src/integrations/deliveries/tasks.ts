import type { Task } from "graphile-worker";
import { DISPATCH_TASK } from "../../events/outbox.js";
import type { DeliverDeps } from "./attempts.js";
import { deliverDue } from "./deliver.js";
import { dispatchAccountEvents } from "./dispatch.js";
import { DELIVER_TASK } from "./repository.js";

/**
 * The minute's sweep of due deliveries: it takes what a claimer that died left behind once the
 * lease ran out, and anything whose wake-up job was lost (the delivery runner's crontab).
 */
export const DELIVER_SWEEP_CRONTAB = `* * * * * ${DELIVER_TASK} ?id=integrations_deliver_sweep\n`;

function positiveInteger(payload: unknown, field: string): number | undefined {
  const value = (payload as Record<string, unknown> | null)?.[field];
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined;
}

/** The worker tasks of events and deliveries: the outbox dispatch and the delivery claimers. */
export function deliveryTaskList(deps: DeliverDeps): Record<string, Task> {
  return {
    [DISPATCH_TASK]: async (payload, helpers) => {
      const accountId = positiveInteger(payload, "accountId");
      if (accountId === undefined) {
        helpers.logger.error("events__dispatch without an accountId: dropped");
        return;
      }
      await dispatchAccountEvents(deps.db, accountId);
    },
    [DELIVER_TASK]: async (_payload, helpers) => {
      await deliverDue(deps, helpers.abortSignal);
    },
  };
}
