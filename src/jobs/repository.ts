import { sql, type Selectable } from "kysely";
import type { DbOrTrx, Trx } from "../db/database.js";
import type { JobsTable } from "../db/schema/jobs.js";
import { parseStoredAnswer, type JobAnswer } from "./answer.js";

type JobRow = Selectable<JobsTable>;

/** The channel on which a finished job is announced (payload: the job id). */
export const FINISHED_CHANNEL = "jobs_finished";

/** The graphile-worker task that runs a job. */
export const RUN_TASK = "jobs__run";

/** A job as the service sees it. */
export interface Job {
  id: string;
  accountId: number;
  kind: string;
  endpoint: string;
  requestHash: string;
  status: "running" | "completed" | "failed" | "expired";
  phase: string;
  progress: { done: number; total: number; label: string };
  input: unknown;
  answer: JobAnswer | undefined;
  attempts: number;
  createdAt: Date;
  deadlineAt: Date;
  finishedAt: Date | null;
  resultExpiresAt: Date | null;
  expiredAt: Date | null;
}

function toJob(row: JobRow): Job {
  return {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind,
    endpoint: row.endpoint,
    requestHash: row.request_hash,
    status: row.status,
    phase: row.phase,
    progress: { done: row.progress_done, total: row.progress_total, label: row.progress_label },
    input: row.input,
    answer: parseStoredAnswer(row.answer),
    attempts: row.attempts,
    createdAt: row.created_at,
    deadlineAt: row.deadline_at,
    finishedAt: row.finished_at,
    resultExpiresAt: row.result_expires_at,
    expiredAt: row.expired_at,
  };
}

/**
 * Serialises job starts of one account and kind until the transaction ends, so the capacity
 * count, the idempotency-key lookup and the insert are one atomic step across processes.
 */
export async function lockAccountKind(trx: Trx, accountId: number, kind: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`jobs:${accountId}:${kind}`}, 0))`.execute(trx);
}

/** Forgets keys of this endpoint whose lifetime ended (so the key may start a new job). */
export async function releaseExpiredKey(
  trx: Trx,
  accountId: number,
  endpoint: string,
  key: string,
): Promise<void> {
  await trx
    .updateTable("jobs")
    .set({ idempotency_key: null })
    .where("account_id", "=", accountId)
    .where("endpoint", "=", endpoint)
    .where("idempotency_key", "=", key)
    .where("key_expires_at", "<=", sql<Date>`now()`)
    .execute();
}

/** The job holding an Idempotency-Key on an endpoint of the account. */
export async function findByKey(
  db: DbOrTrx,
  accountId: number,
  endpoint: string,
  key: string,
): Promise<Job | undefined> {
  const row = await db
    .selectFrom("jobs")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("endpoint", "=", endpoint)
    .where("idempotency_key", "=", key)
    .executeTakeFirst();
  return row ? toJob(row) : undefined;
}

/** A running job of the account started by an identical request on the same endpoint. */
export async function findRunningIdentical(
  db: DbOrTrx,
  accountId: number,
  kind: string,
  endpoint: string,
  requestHash: string,
): Promise<Job | undefined> {
  const row = await db
    .selectFrom("jobs")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("kind", "=", kind)
    .where("endpoint", "=", endpoint)
    .where("request_hash", "=", requestHash)
    .where("status", "=", "running")
    .orderBy("created_at", "desc")
    .executeTakeFirst();
  return row ? toJob(row) : undefined;
}

/** Running jobs of one kind of the account. */
export async function countRunning(db: DbOrTrx, accountId: number, kind: string): Promise<number> {
  const row = await db
    .selectFrom("jobs")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .where("account_id", "=", accountId)
    .where("kind", "=", kind)
    .where("status", "=", "running")
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** A new job to insert. */
export interface NewJob {
  id: string;
  accountId: number;
  kind: string;
  endpoint: string;
  requestHash: string;
  idempotencyKey: string | undefined;
  input: unknown;
  createdAt: Date;
  deadlineAt: Date;
}

/** Inserts a running job and queues its run in the same transaction (graphile-worker add_job). */
export async function insertAndEnqueue(trx: Trx, job: NewJob): Promise<Job> {
  const row = await trx
    .insertInto("jobs")
    .values({
      id: job.id,
      account_id: job.accountId,
      kind: job.kind,
      endpoint: job.endpoint,
      request_hash: job.requestHash,
      idempotency_key: job.idempotencyKey ?? null,
      input: JSON.stringify(job.input ?? null),
      created_at: job.createdAt,
      deadline_at: job.deadlineAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await sql`select graphile_worker.add_job(
      ${RUN_TASK}::text,
      json_build_object('jobId', ${job.id}::text),
      max_attempts => 10,
      job_key => ${`${RUN_TASK}:${job.id}`}::text,
      job_key_mode => 'preserve_run_at'
    )`.execute(trx);
  return toJob(row);
}

/** One job of the account (another account's job is not found). */
export async function findForAccount(db: DbOrTrx, id: string, accountId: number): Promise<Job | undefined> {
  const row = await db
    .selectFrom("jobs")
    .selectAll()
    .where("id", "=", id)
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  return row ? toJob(row) : undefined;
}

/** One job by id. */
export async function findById(db: DbOrTrx, id: string): Promise<Job | undefined> {
  const row = await db.selectFrom("jobs").selectAll().where("id", "=", id).executeTakeFirst();
  return row ? toJob(row) : undefined;
}

/** Marks the start of a run by a worker; undefined when the job no longer runs. */
export async function claimRun(db: DbOrTrx, id: string, workerId: string | null): Promise<Job | undefined> {
  const row = await db
    .updateTable("jobs")
    .set((eb) => ({
      attempts: eb("attempts", "+", 1),
      worker_id: workerId,
      heartbeat_at: sql<Date>`now()`,
      started_at: sql<Date>`coalesce(started_at, now())`,
      phase: sql<string>`case when phase = 'queued' then 'starting' else phase end`,
    }))
    .where("id", "=", id)
    .where("status", "=", "running")
    .returningAll()
    .executeTakeFirst();
  return row ? toJob(row) : undefined;
}

/** Records that the worker running these jobs is alive. */
export async function heartbeat(db: DbOrTrx, id: string): Promise<void> {
  await db
    .updateTable("jobs")
    .set({ heartbeat_at: sql<Date>`now()` })
    .where("id", "=", id)
    .where("status", "=", "running")
    .execute();
}

/** Persists progress of a running job. */
export async function updateProgress(
  db: DbOrTrx,
  id: string,
  update: { phase?: string; done?: number; total?: number; label?: string },
): Promise<void> {
  const set: { phase?: string; progress_done?: number; progress_total?: number; progress_label?: string } =
    {};
  if (update.phase !== undefined) set.phase = update.phase;
  if (update.done !== undefined) set.progress_done = Math.max(0, Math.round(update.done));
  if (update.total !== undefined) set.progress_total = Math.max(0, Math.round(update.total));
  if (update.label !== undefined) set.progress_label = update.label;
  if (Object.keys(set).length === 0) return;
  await db.updateTable("jobs").set(set).where("id", "=", id).where("status", "=", "running").execute();
}

/** How a finished answer is kept. */
export interface AnswerLifetimes {
  retentionMs: number;
  idempotencyTtlMs: number;
  /** True when the answer does not use the key up (409, 429, 503, an export's 402). */
  releaseKey: boolean;
}

/**
 * Stores the final answer of a running job and announces it (NOTIFY on commit). Returns the
 * job's account, or undefined (changing nothing) when the job already has an answer.
 */
export async function storeAnswer(
  trx: Trx,
  id: string,
  answer: JobAnswer,
  lifetimes: AnswerLifetimes,
  attempt?: number,
): Promise<number | undefined> {
  let query = trx
    .updateTable("jobs")
    .set({
      status: answer.status < 400 ? "completed" : "failed",
      answer: JSON.stringify(answer),
      phase: "finished",
      heartbeat_at: null,
      finished_at: sql<Date>`now()`,
      result_expires_at: sql<Date>`now() + ${lifetimes.retentionMs} * interval '1 millisecond'`,
      key_expires_at: lifetimes.releaseKey
        ? null
        : sql<Date>`now() + ${lifetimes.idempotencyTtlMs} * interval '1 millisecond'`,
      ...(lifetimes.releaseKey ? { idempotency_key: null } : {}),
    })
    .where("id", "=", id)
    .where("status", "=", "running");
  // A run fenced by its attempt: a later attempt (after this one was taken for dead) wins.
  if (attempt !== undefined) query = query.where("attempts", "=", attempt);
  const row = await query.returning("account_id").executeTakeFirst();
  if (!row) return undefined;
  await sql`select pg_notify(${FINISHED_CHANNEL}, ${id})`.execute(trx);
  return row.account_id;
}

/** Expires the finished answers of the account beyond its `keep` newest. */
export async function expireBeyondNewest(trx: Trx, accountId: number, keep: number): Promise<number> {
  const result = await trx
    .updateTable("jobs")
    .set({ status: "expired", expired_at: sql<Date>`now()` })
    .where(
      "id",
      "in",
      trx
        .selectFrom("jobs")
        .select("id")
        .where("account_id", "=", accountId)
        .where("status", "in", ["completed", "failed"])
        .orderBy("finished_at", "desc")
        .orderBy("id", "desc")
        .offset(keep),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Expires finished answers past their retention (all, or one job). */
export async function expireDueResults(db: DbOrTrx, id?: string): Promise<number> {
  let query = db
    .updateTable("jobs")
    .set({ status: "expired", expired_at: sql<Date>`now()` })
    .where("status", "in", ["completed", "failed"])
    .where("result_expires_at", "<=", sql<Date>`now()`);
  if (id !== undefined) query = query.where("id", "=", id);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Running jobs past their deadline plus `graceMs` (their worker is gone or never came). */
export async function overdueJobIds(db: DbOrTrx, graceMs: number, id?: string): Promise<string[]> {
  let query = db
    .selectFrom("jobs")
    .select("id")
    .where("status", "=", "running")
    .where("deadline_at", "<", sql<Date>`now() - ${graceMs} * interval '1 millisecond'`)
    .limit(1000);
  if (id !== undefined) query = query.where("id", "=", id);
  return (await query.execute()).map((r) => r.id);
}

/** graphile-worker ids of workers whose running jobs stopped sending heartbeats. */
export async function staleWorkerIds(db: DbOrTrx, staleMs: number): Promise<string[]> {
  const rows = await db
    .selectFrom("jobs")
    .select("worker_id")
    .distinct()
    .where("status", "=", "running")
    .where("worker_id", "is not", null)
    .where("heartbeat_at", "<", sql<Date>`now() - ${staleMs} * interval '1 millisecond'`)
    .execute();
  return rows.map((r) => r.worker_id).filter((w): w is string => w !== null);
}

/**
 * Hands the graphile-worker jobs locked by dead workers back to the queue at once (instead of
 * after graphile-worker's 4-hour lock expiry).
 */
export async function forceUnlockWorkers(db: DbOrTrx, workerIds: string[]): Promise<void> {
  if (workerIds.length === 0) return;
  await sql`select graphile_worker.force_unlock_workers(${workerIds}::text[])`.execute(db);
  await db
    .updateTable("jobs")
    .set({ worker_id: null })
    .where("status", "=", "running")
    .where("worker_id", "in", workerIds)
    .execute();
}

/** Expired jobs that still hold an answer (a file to delete). */
export async function expiredWithAnswers(
  db: DbOrTrx,
  limit: number,
): Promise<{ id: string; answer: JobAnswer | undefined }[]> {
  const rows = await db
    .selectFrom("jobs")
    .select(["id", "answer"])
    .where("status", "=", "expired")
    .where("answer", "is not", null)
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: r.id, answer: parseStoredAnswer(r.answer) }));
}

/** Drops the stored answer of an expired job. */
export async function clearAnswer(db: DbOrTrx, id: string): Promise<void> {
  await db
    .updateTable("jobs")
    .set({ answer: null })
    .where("id", "=", id)
    .where("status", "=", "expired")
    .execute();
}

/** Deletes jobs expired over `forgetAfterMs` ago whose key has also lapsed (polls then get 404). */
export async function deleteForgotten(db: DbOrTrx, forgetAfterMs: number): Promise<number> {
  const result = await db
    .deleteFrom("jobs")
    .where("status", "=", "expired")
    .where("answer", "is", null)
    .where("expired_at", "<", sql<Date>`now() - ${forgetAfterMs} * interval '1 millisecond'`)
    .where((eb) => eb.or([eb("key_expires_at", "is", null), eb("key_expires_at", "<", sql<Date>`now()`)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
