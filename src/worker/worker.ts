import { run, type Runner, type TaskList } from "graphile-worker";
import type { Logger } from "pino";
import type pg from "pg";
import { rateLimitsCleanup } from "./tasks/rate_limits__cleanup.js";

/** Every task of the service, by identifier (`area__action`). */
export const taskList: TaskList = {
  rate_limits__cleanup: rateLimitsCleanup,
};

const CRONTAB = "*/10 * * * * rate_limits__cleanup\n";

/** Starts graphile-worker on the shared pool (its schema is migrated on start). */
export async function startWorker(pool: pg.Pool, logger: Logger, concurrency = 4): Promise<Runner> {
  const runner = await run({
    pgPool: pool,
    concurrency,
    noHandleSignals: true,
    pollInterval: 2_000,
    taskList,
    crontab: CRONTAB,
  });
  logger.info({ concurrency }, "worker started");
  return runner;
}
