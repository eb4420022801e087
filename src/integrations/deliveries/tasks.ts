import type { Task } from "graphile-worker";
import { DISPATCH_TASK, OUTBOX_SWEEP_TASK, sweepOutbox } from "../../events/outbox.js";
import { forgetStaleAnswers } from "./answers.js";
import type { DeliverDeps } from "./attempts.js";
import { deliverDue } from "./deliver.js";
import { dispatchAccountEvents } from "./dispatch.js";
import { DELIVER_TASK } from "./repository.js";

/**
 * The minute's sweep of due deliveries: it takes what a claimer that died left behind once the
 * lease ran out, and anything whose wake-up job was lost (the delivery runner's crontab).
 */
export const DELIVER_SWEEP_CRONTAB = `* * * * * ${DELIVER_TASK} ?id=integrations_deliver_sweep\n`;

/**
 * The minute's sweep of the outbox (`sweepOutbox`): queues the dispatch of accounts whose outbox
 * rows wait longer than a minute, such as those of a dispatch job a killed worker left locked.
 */
export const OUTBOX_SWEEP_CRONTAB = `* * * * * ${OUTBOX_SWEEP_TASK} ?id=events_outbox_sweep\n`;

function positiveInteger(payload: unknown, field: string): number | undefined {
  const value = (payload as Record<string, unknown> | null)?.[field];
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined;
}

/**
 * The worker tasks of events and deliveries: the outbox dispatch and its sweep, and the delivery
 * claimers.
 */
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
    [OUTBOX_SWEEP_TASK]: async (_payload, helpers) => {
      const queued = await sweepOutbox(deps.db);
      if (queued > 0) helpers.logger.info(`outbox sweep: dispatch queued again for ${queued} accounts`);
    },
    [DELIVER_TASK]: async (payload, helpers) => {
      // The minute's sweep (a crontab job carries `_cron`) also removes stale answer notes.
      if ((payload as Record<string, unknown> | null)?._cron) await forgetStaleAnswers(deps.db);
      await deliverDue(deps, helpers.abortSignal);
    },
  };
}
