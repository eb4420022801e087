import type { Request, Response } from "express";
import type { AppContext } from "../http/context.js";
import type { SpecOperation } from "../http/spec.js";
import type { JobKind } from "./kinds.js";
import { parsePrefer, waitMillis } from "./prefer.js";
import { requestHash } from "./request-hash.js";
import { writeAccepted, writeStoredAnswer } from "./respond.js";
import { applyReadTimeRules, startJob } from "./service.js";
import { MAX_REQUEST_WAIT_SECONDS } from "./settings.js";
import { waitForJob } from "./wait.js";

/** A long-running request whose input is already checked (4xx answered before this). */
export interface LongRunningRequest<I> {
  kind: JobKind<I>;
  accountId: number;
  /** What the job's `run` receives (JSON-serialisable; stored with the job). */
  input: I;
}

const KEY_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;

/** When the request arrived: set by the app's first middleware, else now. */
function arrivalOf(res: Response): number {
  const arrived = res.locals.arrivedAt;
  return typeof arrived === "number" ? arrived : Date.now();
}

/** The request's full path without the query (independent of where a router is mounted). */
function pathOf(req: Request): string {
  return req.originalUrl.split("?")[0] ?? req.path;
}

/** A signal that aborts when the client goes away, so waiting stops. */
function clientGone(res: Response): AbortSignal {
  const controller = new AbortController();
  res.once("close", () => controller.abort());
  return controller.signal;
}

/**
 * Runs a long-running request as a background job and answers it: the job's own answer when it
 * finishes within the wait (`Prefer: wait=N` 0-75 counted from arrival, `respond-async`, default
 * JOB_WAIT_SECONDS / 75 s), otherwise 202 with the job. Idempotency-Key replays, identical
 * requests without a key, 409 `idempotency_key_reused` and 429 `job_capacity_busy` are handled
 * here; see src/jobs/index.ts.
 */
export async function runLongRunning<I>(
  req: Request,
  res: Response,
  ctx: AppContext,
  request: LongRunningRequest<I>,
): Promise<void> {
  const arrivedAt = arrivalOf(res);
  const preference = parsePrefer(req.headers.prefer, MAX_REQUEST_WAIT_SECONDS);
  const until = arrivedAt + waitMillis(preference, ctx.jobs.settings.defaultWaitMs);
  const header = req.headers["idempotency-key"];
  const key = typeof header === "string" && KEY_PATTERN.test(header) ? header : undefined;
  const operation = res.locals.operation as SpecOperation | undefined;
  const endpoint = `${req.method} ${operation?.path ?? req.path}`;

  await ctx.jobs.ensureQueue();
  const started = await startJob(ctx.db, {
    kind: request.kind,
    accountId: request.accountId,
    endpoint,
    requestHash: requestHash({ method: req.method, path: pathOf(req), query: req.query, body: req.body }),
    idempotencyKey: key,
    input: request.input,
    arrivedAt,
  });
  let job = await applyReadTimeRules(ctx.db, started.job);
  // A replay of a finished job returns the stored answer at once, like a poll.
  const storedBefore = started.origin === "replayed" && job.status !== "running";
  job = await waitForJob(ctx.db, ctx.jobs.notifier, job, until, ctx.jobs.settings.recheckMs, clientGone(res));
  if (job.status === "running") {
    writeAccepted(res, job, preference.applied);
    return;
  }
  await writeStoredAnswer(res, ctx.storage, job, {
    preferenceApplied: preference.applied,
    withJobStatus: storedBefore,
  });
}
