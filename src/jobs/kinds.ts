import type { Logger } from "pino";
import type { Db, Trx } from "../db/database.js";
import type { FileStorage } from "../storage/file-storage.js";
import type { LongRunningOperationId } from "../http/contract.js";
import type { JobAnswer, JobAnswerOf } from "./answer.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** Progress a running job reports; persisted and shown in the 202 body. */
export interface JobProgressUpdate {
  /** The step, for example `querying`, `writing`. */
  phase?: string;
  done?: number;
  /** 0 while unknown. */
  total?: number;
  /** What the units are, for example `leads`. */
  label?: string;
}

/**
 * Services of the process that job kinds use beyond the database and storage (for example the AI
 * engine). An area adds its own as an optional member with `declare module` (see
 * src/ai/services.ts); the worker passes them in `JobTaskDeps.services`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface JobServices {}

/** What a job kind's `run` receives besides its input. */
export interface JobContext {
  jobId: string;
  accountId: number;
  kind: string;
  /** 1 on the first run; more when a run was interrupted (restart, crashed worker). */
  attempt: number;
  db: Db;
  storage: FileStorage;
  logger: Logger;
  /** The deployment's signing secret (signed download links in a job's answer). */
  signingSecret: string;
  /** The process's services for job kinds (JobServices); a member is absent when not wired. */
  services: JobServices;
  /** Aborted at the time limit (the answer is then 500 `job_timeout`) or on worker shutdown. */
  signal: AbortSignal;
  /** Persists progress (cheap; call it every few seconds, not per row). */
  progress(update: JobProgressUpdate): Promise<void>;
  /**
   * Stores the answer inside the caller's transaction, so that what the job charges and writes
   * commits together with its answer, exactly once: it locks the job row and throws
   * JobNoLongerRunning (rolling the transaction back) when the job already has an answer (timed
   * out, or finished by an earlier run) or a later attempt took the job over (this run was taken
   * for dead). After commit, `run` should return the same answer.
   */
  commit(trx: Trx, answer: JobAnswer): Promise<void>;
}

/** A kind of background job: limits, lifetimes and the work. */
export interface JobKindDefinition<I, O extends LongRunningOperationId = LongRunningOperationId> {
  /** Name shown as `kind` in the 202 body, for example `api_leads_export`. */
  kind: string;
  /** The contract operation whose requests run as this kind: its answers are that operation's. */
  operation: O;
  /** Running jobs of this kind per account; one more gives 429 `job_capacity_busy`. */
  capacity: number;
  /** Time limit from arrival; past it the answer is 500 `job_timeout`. Default 30 minutes. */
  timeoutMs?: number;
  /** How long the finished answer is kept. Default 60 minutes. */
  retentionMs?: number;
  /** How long the Idempotency-Key is kept after the job finished. Default 25 hours. */
  idempotencyTtlMs?: number;
  /**
   * Statuses whose answer does not use the Idempotency-Key up, besides 409, 429 and 503 (for
   * example `[402]` for an export's `insufficient_credits`).
   */
  keyKeepingStatuses?: number[];
  /** Checks the stored input when a job runs (queued jobs outlive code); default: as stored. */
  parseInput?: (raw: unknown) => I;
  /**
   * Does the work and returns the final answer (errors may also be thrown as ApiError). Must be
   * safe to run again after an interruption: use `job.commit(trx, answer)` in the transaction
   * that charges credits, so a second run finds the job finished and charges nothing.
   */
  run(input: I, job: JobContext): Promise<JobAnswerOf<O>>;
}

/** A registered kind (defaults applied). */
export interface JobKind<
  I = unknown,
  O extends LongRunningOperationId = LongRunningOperationId,
> extends Required<Omit<JobKindDefinition<I, O>, "parseInput" | "run">> {
  parseInput(raw: unknown): I;
  run(input: I, job: JobContext): Promise<JobAnswer>;
}

const registry = new Map<string, JobKind>();

/** Statuses whose answer never uses the Idempotency-Key up (docs/jobs.md, Idempotency-Key). */
const KEY_KEEPING = [409, 429, 503];

/**
 * Defines and registers a job kind (once per process, at module load). The operation's handler
 * passes the returned kind to runLongRunning; worker processes find it by name, so the module must be imported by
 * src/worker/worker.ts as well.
 */
export function defineJobKind<I, O extends LongRunningOperationId>(
  definition: JobKindDefinition<I, O>,
): JobKind<I, O> {
  if (!/^[a-z][a-z0-9_]*$/.test(definition.kind)) throw new Error(`invalid job kind ${definition.kind}`);
  if (definition.capacity < 1) throw new Error(`job kind ${definition.kind} needs a capacity >= 1`);
  const kind: JobKind<I, O> = {
    kind: definition.kind,
    operation: definition.operation,
    capacity: definition.capacity,
    timeoutMs: definition.timeoutMs ?? 30 * MINUTE,
    retentionMs: definition.retentionMs ?? HOUR,
    idempotencyTtlMs: definition.idempotencyTtlMs ?? 25 * HOUR,
    keyKeepingStatuses: [...KEY_KEEPING, ...(definition.keyKeepingStatuses ?? [])],
    parseInput: definition.parseInput ?? ((raw) => raw as I),
    run: definition.run,
  };
  const existing = registry.get(kind.kind);
  if (existing && existing.run !== kind.run) throw new Error(`job kind ${kind.kind} is defined twice`);
  registry.set(kind.kind, kind as unknown as JobKind);
  return kind;
}

/** The registered kind of this name, if any. */
export function jobKindNamed(name: string): JobKind | undefined {
  return registry.get(name);
}

/** Answer and Idempotency-Key lifetimes of the contract (openapi.yaml, getJob), for kinds to use. */
export const JOB_LIFETIMES = {
  /** Answer kept 60 minutes; key 25 hours. */
  standard: { retentionMs: HOUR, idempotencyTtlMs: 25 * HOUR },
  /** Schedule trigger: answer kept 24 hours; key 48 hours. */
  scheduleTrigger: { retentionMs: 24 * HOUR, idempotencyTtlMs: 48 * HOUR },
} as const;
