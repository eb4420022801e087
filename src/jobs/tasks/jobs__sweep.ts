import type { Task } from "graphile-worker";
import type { Db } from "../../db/database.js";
import { jobFilesPrefix, ownedFileOf } from "../large-bodies.js";
import * as repo from "../repository.js";
import { timeOutJob } from "../service.js";
import { DEADLINE_GRACE_MS, EXPIRED_KEPT_MS, STALE_HEARTBEAT_MS } from "../settings.js";
import type { JobTaskDeps } from "./jobs__run.js";

/** What the sweep needs. */
type SweepDeps = Pick<JobTaskDeps, "db" | "storage" | "logger">;

/** What one sweep did. */
export interface SweepResult {
  timedOut: number;
  unlockedWorkers: number;
  expired: number;
  filesDeleted: number;
  forgotten: number;
}

/**
 * Housekeeping of jobs (crontab, every minute): answers running jobs long past their time limit
 * with `job_timeout`, hands jobs of crashed workers (no heartbeat) back to the queue, expires
 * answers past their retention, deletes the files of expired answers and forgets jobs expired
 * over a day ago whose key has lapsed.
 */
export async function sweepJobs(deps: SweepDeps): Promise<SweepResult> {
  const db: Db = deps.db;
  let timedOut = 0;
  for (const id of await repo.overdueJobIds(db, DEADLINE_GRACE_MS)) {
    const job = await repo.findById(db, id);
    if (job && (await timeOutJob(db, job))) timedOut += 1;
  }
  const stale = await repo.staleWorkerIds(db, STALE_HEARTBEAT_MS);
  await repo.forceUnlockWorkers(db, stale);
  if (stale.length > 0)
    deps.logger.warn({ workers: stale }, "jobs of unresponsive workers handed back to the queue");
  const expired = await repo.expireDueResults(db);
  let filesDeleted = 0;
  for (;;) {
    const batch = await repo.expiredWithAnswers(db, 500);
    for (const { id, answer } of batch) {
      const owned = ownedFileOf(answer);
      if (owned !== undefined) {
        await deps.storage.delete(owned);
        filesDeleted += 1;
      }
      // Large bodies of attempts that rolled back after writing theirs (large-bodies.ts).
      await deps.storage.deletePrefix(jobFilesPrefix(id));
      await repo.clearAnswer(db, id);
    }
    if (batch.length < 500) break;
  }
  const forgotten = await repo.deleteForgotten(db, EXPIRED_KEPT_MS);
  return { timedOut, unlockedWorkers: stale.length, expired, filesDeleted, forgotten };
}

/** graphile-worker task `jobs__sweep`. */
export function sweepJobsTask(deps: SweepDeps): Task {
  return async () => {
    const result = await sweepJobs(deps);
    if (result.timedOut + result.unlockedWorkers + result.expired + result.forgotten > 0) {
      deps.logger.info(result, "jobs swept");
    }
  };
}
