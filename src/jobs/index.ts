/**
 * The job protocol of long-running requests (openapi.yaml: `getJob` and the 202 of each
 * long-running operation; docs/jobs.md).
 *
 * A long-running operation (exportLeads, triggerEmailSchedule, suggestCategories and the three
 * lead-export-history POSTs):
 *
 *   1. Define its kind once, in its area (for example src/exports/job/kind.ts), bound to its
 *      operation, and import that module from src/worker/worker.ts too (workers find kinds by name):
 *
 *        export const leadsExportJob = defineJobKind<ExportJobInput, "exportLeads">({
 *          kind: "api_leads_export",
 *          operation: "exportLeads",           // run's answers are this operation's (JobAnswerOf)
 *          capacity: 3,                        // running per account; more: 429 job_capacity_busy
 *          timeoutMs: 20 * 60_000,             // from arrival; past it: 500 job_timeout
 *          ...JOB_LIFETIMES.standard,          // answer 60 min, key 25 h (scheduleTrigger: 24 h / 48 h)
 *          keyKeepingStatuses: [402],          // besides 409/429/503: answers that keep the key free
 *          parseInput: (raw) => parseExportJobInput(raw),   // queued jobs outlive code
 *          async run(input, job) {
 *            await job.progress({ phase: "writing", done: 0, total, label: "leads" });
 *            await job.storage.put(storageKey, stream);
 *            let answer;
 *            await job.db.transaction().execute(async (trx) => {
 *              const charged = await chargeDelivery(trx, { accountId: job.accountId, ..., deliver });
 *              answer = { status: 200, headers: { "X-Credits-Capped": "true" },
 *                         file: { storageKey, contentType: "text/csv", fileName, shared: true } };
 *              await job.commit(trx, answer);  // the answer commits with the charge, exactly once
 *            });
 *            return answer;
 *          },
 *        });
 *
 *      `run` returns the final answer, typed by the operation's contract: `{status, body}`,
 *      `{status, file}` (a file in job.storage, streamed to every poll) or an error (`throw
 *      errors.badRequest(...)`): a failed job keeps its error answer like any other. `job.signal`
 *      aborts at the time limit and on worker shutdown; check it in long loops. Credits are charged
 *      through src/credits/charge.ts (chargeDelivery) in the transaction that commits the answer.
 *
 *   2. In the operation's handler: check the input first (4xx at once, nothing queued), then
 *
 *        return runLongRunning(request, deps, { kind: leadsExportJob, accountId, input });
 *
 *      It returns the answer (the handler returns it as it is) and handles Prefer (wait=N 0-75
 *      from arrival, respond-async, Preference-Applied), the Idempotency-Key rules (replays, 409
 *      idempotency_key_reused, 410 job_result_expired, keys per endpoint, 409/429/503 and
 *      keyKeepingStatuses answers not using the key up), identical requests without a key joining
 *      the running job, the capacity, and the answer: the job's own answer with X-SVC-Job-Id and
 *      Cache-Control: no-store when it finishes within the wait, otherwise 202 with the job body,
 *      Location, Retry-After and X-SVC-Job-Status.
 *
 * Guarantees: the job row and its graphile-worker run (task `jobs__run`) are created in one
 * transaction; any process answers for any job (LISTEN/NOTIFY `jobs_finished`, with re-reads as a
 * fallback). Running jobs survive restarts and crashed workers: graphile-worker retries them
 * (a crash is detected by missing heartbeats, `jobs__sweep`), so `run` must be safe to run
 * again; what it charges must be written in the transaction that calls `job.commit`, which
 * refuses (and so rolls back) once the job has an answer. `GET /jobs/{jobId}` is in handlers.ts.
 */
import type { TaskList } from "graphile-worker";
import { runJobTask, type JobTaskDeps } from "./tasks/jobs__run.js";
import { sweepJobsTask } from "./tasks/jobs__sweep.js";

export { errorAnswer, type AnswerFile, type JobAnswer, type JobAnswerOf } from "./answer.js";
export { jobErrors } from "./errors.js";
export {
  defineJobKind,
  JOB_LIFETIMES,
  type JobContext,
  type JobKind,
  type JobKindDefinition,
  type JobServices,
} from "./kinds.js";
export {
  runLongRunning,
  type LongRunningCall,
  type LongRunningDeps,
  type LongRunningRequest,
} from "./long-running.js";
export { JobsRuntime } from "./runtime.js";
export type { JobTaskDeps } from "./tasks/jobs__run.js";

/** The graphile-worker tasks of the job protocol. */
export function jobTaskList(deps: JobTaskDeps): TaskList {
  return { jobs__run: runJobTask(deps), jobs__sweep: sweepJobsTask(deps) };
}

/** Crontab line of the jobs sweep (every minute). */
export const JOBS_CRONTAB = "* * * * * jobs__sweep\n";
