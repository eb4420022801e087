import type { IncomingHttpHeaders } from "node:http";
import type { Db } from "../db/database.js";
import type { LongRunningOperationId, ReplayedAnswer } from "../http/contract.js";
import type { FileStorage } from "../storage/file-storage.js";
import type { JobKind } from "./kinds.js";
import { parsePrefer, waitMillis } from "./prefer.js";
import { requestHash } from "./request-hash.js";
import { acceptedAnswer, storedAnswer } from "./respond.js";
import type { JobsRuntime } from "./runtime.js";
import { applyReadTimeRules, startJob } from "./service.js";
import { MAX_REQUEST_WAIT_SECONDS } from "./settings.js";
import { waitForJob } from "./wait.js";

/** What the job protocol needs of an API process. */
export interface LongRunningDeps {
  db: Db;
  storage: FileStorage;
  jobs: JobsRuntime;
}

/** The parts of a long-running operation's request the protocol reads (an `OperationRequest`). */
export interface LongRunningCall {
  operation: { operationId: string; method: string; path: string };
  query: unknown;
  body: unknown;
  http: {
    method: string;
    path: string;
    rawHeaders: IncomingHttpHeaders;
    arrivedAt: number;
    signal: AbortSignal;
  };
}

/** A long-running request whose input is already checked (4xx answered before this). */
export interface LongRunningRequest<I> {
  kind: JobKind<I, LongRunningOperationId>;
  accountId: number;
  /** What the job's `run` receives (JSON-serialisable; stored with the job). */
  input: I;
}

const KEY_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;

/**
 * Runs a long-running request as a background job and returns its answer: the job's own answer
 * when it finishes within the wait (`Prefer: wait=N` 0-75 counted from arrival, `respond-async`,
 * default JOB_WAIT_SECONDS / 75 s), otherwise 202 with the job. Idempotency-Key replays, identical
 * requests without a key, 409 `idempotency_key_reused` and 429 `job_capacity_busy` are handled
 * here; see src/jobs/index.ts.
 */
export async function runLongRunning<I>(
  call: LongRunningCall,
  deps: LongRunningDeps,
  request: LongRunningRequest<I>,
): Promise<ReplayedAnswer> {
  const { http } = call;
  if (request.kind.operation !== call.operation.operationId) {
    throw new Error(
      `job kind ${request.kind.kind} answers ${request.kind.operation}, not ${call.operation.operationId}`,
    );
  }
  const preference = parsePrefer(http.rawHeaders.prefer, MAX_REQUEST_WAIT_SECONDS);
  const until = http.arrivedAt + waitMillis(preference, deps.jobs.settings.defaultWaitMs);
  const header = http.rawHeaders["idempotency-key"];
  const key = typeof header === "string" && KEY_PATTERN.test(header) ? header : undefined;

  await deps.jobs.ensureQueue();
  const started = await startJob(deps.db, {
    kind: request.kind,
    accountId: request.accountId,
    endpoint: `${call.operation.method} ${call.operation.path}`,
    requestHash: requestHash({ method: http.method, path: http.path, query: call.query, body: call.body }),
    idempotencyKey: key,
    input: request.input,
    arrivedAt: http.arrivedAt,
  });
  let job = await applyReadTimeRules(deps.db, started.job);
  // A replay of a finished job returns the stored answer at once, like a poll.
  const storedBefore = started.origin === "replayed" && job.status !== "running";
  const { notifier, settings } = deps.jobs;
  job = await waitForJob(deps.db, notifier, job, until, settings.recheckMs, http.signal);
  if (job.status === "running") return acceptedAnswer(job, preference.applied);
  return storedAnswer(deps.storage, job, {
    preferenceApplied: preference.applied,
    withJobStatus: storedBefore,
  });
}
