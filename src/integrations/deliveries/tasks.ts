import type { Task } from "graphile-worker";
import { DISPATCH_TASK } from "../../events/outbox.js";
import { deliverOnce, type DeliverDeps } from "./deliver.js";
import { dispatchAccountEvents } from "./dispatch.js";
import { DELIVER_TASK } from "./repository.js";

function positiveInteger(payload: unknown, field: string): number | undefined {
  const value = (payload as Record<string, unknown> | null)?.[field];
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined;
}

/** The worker tasks of events and deliveries: the outbox dispatch and one delivery attempt. */
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
    [DELIVER_TASK]: async (payload, helpers) => {
      const deliveryId = positiveInteger(payload, "deliveryId");
      if (deliveryId === undefined) {
        helpers.logger.error("integrations__deliver without a deliveryId: dropped");
        return;
      }
      await deliverOnce(deps, deliveryId);
    },
  };
}
