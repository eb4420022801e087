import type { Task } from "graphile-worker";
import type { Logger } from "pino";
import type { Db, Trx } from "../../db/database.js";
import { ApiError } from "../../http/errors.js";
import type { FileStorage } from "../../storage/file-storage.js";
import { errorAnswer, internalErrorAnswer, timeoutAnswer, type JobAnswer } from "../answer.js";
import { JobNoLongerRunning } from "../errors.js";
import { jobKindNamed, type JobContext, type JobServices } from "../kinds.js";
import * as repo from "../repository.js";
import { finishJob, storeFinalAnswer } from "../service.js";
import { HEARTBEAT_MS } from "../settings.js";

/** What the job tasks need. */
export interface JobTaskDeps {
  db: Db;
  storage: FileStorage;
  logger: Logger;
  /** The deployment's signing secret (src/lib/signing-secret.ts), for jobs that hand out links. */
  signingSecret: string;
  /** Services job kinds use (src/jobs/kinds.ts, JobServices). */
  services?: JobServices;
}

class Interrupted extends Error {
  constructor(readonly reason: "timeout" | "shutdown") {
    super(reason === "timeout" ? "job time limit reached" : "worker shutting down");
  }
}

function jobIdOf(payload: unknown): string | undefined {
  const id = (payload as { jobId?: unknown } | null)?.jobId;
  return typeof id === "string" && id.length > 0 ? id : undefined;
}

/**
 * graphile-worker task `jobs__run`: runs one job of a registered kind and stores its answer.
 * Idempotent: a job that already has an answer is skipped, so a retry after a crash or a restart
 * never does finished work twice. At the time limit the answer is 500 `job_timeout`; on worker
 * shutdown the task fails, and graphile-worker hands the job to the next worker.
 */
export function runJobTask(deps: JobTaskDeps): Task {
  return async (payload, helpers) => {
    const jobId = jobIdOf(payload);
    if (!jobId) {
      deps.logger.error({ payload }, "jobs__run without a job id");
      return;
    }
    const job = await repo.claimRun(deps.db, jobId, helpers.job.locked_by ?? null);
    if (!job) return; // already answered (an earlier run, a timeout) or forgotten
    const kind = jobKindNamed(job.kind);
    const logger = deps.logger.child({ jobId, kind: job.kind, attempt: job.attempts });
    if (!kind) {
      logger.error("unknown job kind");
      await finishJob(deps.db, job, internalErrorAnswer());
      return;
    }
    const remaining = job.deadlineAt.getTime() - Date.now();
    if (remaining <= 0) {
      await finishJob(deps.db, job, timeoutAnswer());
      return;
    }

    const controller = new AbortController();
    let interrupt: (reason: Interrupted) => void = () => {};
    const interrupted = new Promise<never>((_resolve, reject) => {
      interrupt = (reason) => {
        if (!controller.signal.aborted) controller.abort(reason);
        reject(reason);
      };
    });
    interrupted.catch(() => {});
    const timer = setTimeout(() => interrupt(new Interrupted("timeout")), remaining);
    const onShutdown = () => interrupt(new Interrupted("shutdown"));
    helpers.abortSignal?.addEventListener("abort", onShutdown, { once: true });
    const beat = setInterval(() => {
      repo.heartbeat(deps.db, jobId).catch((err: unknown) => logger.warn({ err }, "job heartbeat failed"));
    }, HEARTBEAT_MS);

    let committed = false;
    const context: JobContext = {
      jobId,
      accountId: job.accountId,
      kind: job.kind,
      attempt: job.attempts,
      db: deps.db,
      storage: deps.storage,
      logger,
      signingSecret: deps.signingSecret,
      services: deps.services ?? {},
      signal: controller.signal,
      progress: (update) => repo.updateProgress(deps.db, jobId, update),
      async commit(trx: Trx, answer: JobAnswer) {
        // Only this attempt may commit: a run taken for dead and retried can no longer answer.
        if (!(await storeFinalAnswer(trx, job, answer, job.attempts, deps.storage))) {
          throw new JobNoLongerRunning(jobId);
        }
        committed = true;
      },
    };

    try {
      const answer = await Promise.race([
        (async () => kind.run(kind.parseInput(job.input), context))(),
        interrupted,
      ]);
      if (!committed) await finishJob(deps.db, job, answer, deps.storage);
    } catch (err) {
      if (err instanceof Interrupted && err.reason === "shutdown") throw err; // retried by the next worker
      if (err instanceof Interrupted) {
        logger.warn("job time limit reached");
        await finishJob(deps.db, job, timeoutAnswer());
      } else if (err instanceof JobNoLongerRunning) {
        logger.info("job already answered; this run's work was rolled back");
      } else if (err instanceof ApiError) {
        await finishJob(deps.db, job, errorAnswer(err));
      } else {
        logger.error({ err }, "job failed");
        await finishJob(deps.db, job, internalErrorAnswer());
      }
    } finally {
      clearTimeout(timer);
      clearInterval(beat);
      helpers.abortSignal?.removeEventListener("abort", onShutdown);
    }
  };
}
