import { run, type Runner } from "graphile-worker";
import type { Logger } from "pino";
import type pg from "pg";
import type { Db } from "../db/database.js";
import {
  EXPORT_FILES_CLEANUP_CRONTAB,
  exportFilesCleanup,
} from "../export-history/tasks/export_files__cleanup.js";
// Registers the api_leads_export job kind, so this worker runs exports.
import "../exports/job/kind.js";
import { JOBS_CRONTAB, jobTaskList } from "../jobs/index.js";
import { workerLogger } from "../jobs/runtime.js";
import { rateLimitsCleanup } from "../rate-limit/tasks/rate_limits__cleanup.js";
import type { FileStorage } from "../storage/file-storage.js";

const CRONTAB = "*/10 * * * * rate_limits__cleanup\n" + JOBS_CRONTAB + EXPORT_FILES_CLEANUP_CRONTAB;

/** What tasks that touch the service's data need (job kinds run on these). */
export interface WorkerDeps {
  db: Db;
  storage: FileStorage;
  /** The deployment's signing secret (jobs that answer with signed links). */
  signingSecret: string;
}

/**
 * Starts graphile-worker on the shared pool (its schema is migrated on start) with every task of
 * the service, by identifier (`area__action`, each defined in its area).
 */
export async function startWorker(
  pool: pg.Pool,
  logger: Logger,
  deps: WorkerDeps,
  concurrency = 4,
): Promise<Runner> {
  const runner = await run({
    pgPool: pool,
    concurrency,
    noHandleSignals: true,
    pollInterval: 2_000,
    taskList: {
      rate_limits__cleanup: rateLimitsCleanup,
      ...jobTaskList({ ...deps, logger }),
      export_files__cleanup: exportFilesCleanup(deps),
    },
    crontab: CRONTAB,
    logger: workerLogger(logger),
  });
  logger.info({ concurrency }, "worker started");
  return runner;
}
