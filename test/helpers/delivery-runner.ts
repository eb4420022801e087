import { run, type Runner } from "graphile-worker";
import { pino } from "pino";
import type { AppContext } from "../../src/app/context.js";
import { deliveryTaskList } from "../../src/integrations/deliveries/tasks.js";
import { workerLogger } from "../../src/jobs/runtime.js";
import type { Mailer } from "../../src/mail/mailer.js";
import { MAIL_TASK } from "../../src/mail/queue.js";
import { mailSendTask } from "../../src/mail/task.js";
import type { Outbound } from "../../src/outbound/index.js";

const silent = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });

/** A short retry schedule for tests: the production one spans 42 hours. */
export const TEST_RETRY_DELAYS_MS = [150, 150, 150, 150, 150, 150, 150];

/** A graphile-worker runner with the event dispatch, delivery and (with a mailer) mail tasks. */
export async function startDeliveryRunner(
  ctx: AppContext,
  options: { outbound?: Outbound; mailer?: Mailer; retryDelaysMs?: readonly number[] } = {},
): Promise<Runner> {
  return run({
    pgPool: ctx.pool,
    concurrency: 4,
    noHandleSignals: true,
    pollInterval: 100,
    taskList: {
      ...deliveryTaskList({
        db: ctx.db,
        outbound: options.outbound ?? ctx.outbound,
        logger: silent,
        retryDelaysMs: options.retryDelaysMs ?? TEST_RETRY_DELAYS_MS,
        crm: ctx.config,
      }),
      ...(options.mailer ? { [MAIL_TASK]: mailSendTask(options.mailer) } : {}),
    },
    logger: workerLogger(silent),
  });
}
