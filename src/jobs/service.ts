import { randomBytes } from "node:crypto";
import type { Db, DbOrTrx, Trx } from "../db/database.js";
import { normaliseAnswer, timeoutAnswer, type JobAnswer } from "./answer.js";
import type { FileStorage } from "../storage/file-storage.js";
import { jobErrors } from "./errors.js";
import { keepLargeBody } from "./large-bodies.js";
import { JOB_LIFETIMES, jobKindNamed, type JobKind } from "./kinds.js";
import * as repo from "./repository.js";
import type { Job } from "./repository.js";
import { DEADLINE_GRACE_MS, EXPIRED_KEPT_MS, MAX_FINISHED_PER_ACCOUNT } from "./settings.js";

export type { Job } from "./repository.js";

/** A new job id: opaque, unguessable. */
export function newJobId(): string {
  return `job_${randomBytes(12).toString("hex")}`;
}

/** A long-running request, checked and ready to become a job. */
export interface JobRequest<I> {
  kind: JobKind<I>;
  accountId: number;
  /** The operation, `METHOD /path/template`: Idempotency-Keys are per endpoint. */
  endpoint: string;
  requestHash: string;
  idempotencyKey: string | undefined;
  input: I;
  /** When the request arrived (ms since epoch); the time limit counts from it. */
  arrivedAt: number;
}

/** How a request got its job: a new one, the key's job (replay), or an identical running one. */
export type JobOrigin = "created" | "replayed" | "joined";

/**
 * Applies the Idempotency-Key rules and the per-account capacity, atomically across processes
 * (advisory lock per account and kind), and creates and queues a new job when needed.
 * Throws 409 `idempotency_key_reused` or 429 `job_capacity_busy`; neither uses the key up.
 */
export async function startJob<I>(db: Db, request: JobRequest<I>): Promise<{ job: Job; origin: JobOrigin }> {
  const { kind, accountId, endpoint, requestHash, idempotencyKey } = request;
  return db.transaction().execute(async (trx) => {
    await repo.lockAccountKind(trx, accountId, kind.kind);
    if (idempotencyKey !== undefined) {
      await repo.releaseExpiredKey(trx, accountId, endpoint, idempotencyKey);
      const existing = await repo.findByKey(trx, accountId, endpoint, idempotencyKey);
      if (existing) {
        if (existing.requestHash !== requestHash) throw jobErrors.keyReused();
        return { job: existing, origin: "replayed" as const };
      }
    } else {
      const identical = await repo.findRunningIdentical(trx, accountId, kind.kind, endpoint, requestHash);
      if (identical && !isOverdue(identical)) return { job: identical, origin: "joined" as const };
    }
    if ((await repo.countRunning(trx, accountId, kind.kind)) >= kind.capacity) {
      throw jobErrors.capacityBusy(kind.capacity);
    }
    const job = await repo.insertAndEnqueue(trx, {
      id: newJobId(),
      accountId,
      kind: kind.kind,
      endpoint,
      requestHash,
      idempotencyKey,
      input: request.input,
      createdAt: new Date(request.arrivedAt),
      deadlineAt: new Date(request.arrivedAt + kind.timeoutMs),
    });
    return { job, origin: "created" as const };
  });
}

/** Lifetimes of a kind's answers (standard ones for a kind this process does not know). */
function lifetimesOf(kindName: string, answer: JobAnswer): repo.AnswerLifetimes {
  const kind = jobKindNamed(kindName);
  const base = kind ?? { ...JOB_LIFETIMES.standard, keyKeepingStatuses: [409, 429, 503] };
  return {
    retentionMs: base.retentionMs,
    idempotencyTtlMs: base.idempotencyTtlMs,
    releaseKey: base.keyKeepingStatuses.includes(answer.status),
  };
}

/**
 * Stores a job's final answer in the caller's transaction (and expires the account's oldest
 * answers beyond 500). Returns false, changing nothing, when the job already has an answer. With
 * `storage`, a large JSON body is kept there (large-bodies.ts); a transaction that rolls back
 * afterwards leaves that file behind, in the job's folder, until the answer expires (jobs__sweep).
 */
export async function storeFinalAnswer(
  trx: Trx,
  job: { id: string; kind: string; attempts?: number },
  answer: JobAnswer,
  attempt?: number,
  storage?: FileStorage,
): Promise<boolean> {
  const checked = normaliseAnswer(answer);
  const run = { id: job.id, attempt: attempt ?? job.attempts ?? 0 };
  const normalised = storage ? await keepLargeBody(storage, run, checked) : checked;
  const accountId = await repo.storeAnswer(
    trx,
    job.id,
    normalised,
    lifetimesOf(job.kind, normalised),
    attempt,
  );
  if (accountId === undefined) {
    if (storage && "bodyFile" in normalised) await storage.delete(normalised.bodyFile.storageKey);
    return false;
  }
  await repo.expireBeyondNewest(trx, accountId, MAX_FINISHED_PER_ACCOUNT);
  return true;
}

/** Stores a job's final answer in a transaction of its own (a large body in `storage`, if given). */
export async function finishJob(
  db: Db,
  job: { id: string; kind: string; attempts?: number },
  answer: JobAnswer,
  storage?: FileStorage,
): Promise<boolean> {
  return db.transaction().execute((trx) => storeFinalAnswer(trx, job, answer, undefined, storage));
}

/** Answers a job past its time limit with 500 `job_timeout` (no-op when it already has an answer). */
export async function timeOutJob(db: Db, job: { id: string; kind: string }): Promise<boolean> {
  return finishJob(db, job, timeoutAnswer());
}

function isOverdue(job: Job, now = Date.now()): boolean {
  return job.status === "running" && now > job.deadlineAt.getTime() + DEADLINE_GRACE_MS;
}

/**
 * The job as a reader should see it: a running job long past its time limit gets its
 * `job_timeout` answer (its worker is gone), a finished answer past its retention expires.
 */
export async function applyReadTimeRules(db: Db, job: Job): Promise<Job> {
  let acted = false;
  if (isOverdue(job)) {
    // Whether or not this call stored it, the job has an answer now (a worker may have been first).
    await timeOutJob(db, job);
    acted = true;
  }
  if (
    (job.status === "completed" || job.status === "failed") &&
    job.resultExpiresAt !== null &&
    job.resultExpiresAt.getTime() <= Date.now()
  ) {
    await repo.expireDueResults(db, job.id);
    acted = true;
  }
  if (!acted) return job;
  return (await repo.findById(db, job.id)) ?? job;
}

/** A job of the account for a poll, or undefined (404) when unknown or expired over a day ago. */
export async function findJobForPoll(db: Db, id: string, accountId: number): Promise<Job | undefined> {
  const found = await repo.findForAccount(db, id, accountId);
  if (!found) return undefined;
  const job = await applyReadTimeRules(db, found);
  if (job.status === "expired" && job.expiredAt && Date.now() - job.expiredAt.getTime() > EXPIRED_KEPT_MS) {
    return undefined;
  }
  return job;
}

/** Re-reads a job (read-time rules applied). */
export async function reloadJob(db: Db, id: string): Promise<Job | undefined> {
  const job = await repo.findById(db, id);
  return job ? applyReadTimeRules(db, job) : undefined;
}

/** Reads a job without the read-time rules (cheap; used while waiting). */
export function readJob(db: DbOrTrx, id: string): Promise<Job | undefined> {
  return repo.findById(db, id);
}
