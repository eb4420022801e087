/** Settings of the job protocol (from the configuration, src/config.ts). */
export interface JobSettings {
  /** Wait of a long-running request without `Prefer: wait` (JOB_WAIT_SECONDS, default 75). */
  defaultWaitMs: number;
  /** How often a waiting request re-reads its job in case a notification was missed. */
  recheckMs: number;
}

/** Longest `Prefer: wait` of a long-running request, in seconds. */
export const MAX_REQUEST_WAIT_SECONDS = 75;
/** Longest `Prefer: wait` of a job poll, in seconds. */
export const MAX_POLL_WAIT_SECONDS = 60;
/** At most this many finished answers are kept per account (oldest expire first). */
export const MAX_FINISHED_PER_ACCOUNT = 500;
/** An expired job answers 410 this long, then 404. */
export const EXPIRED_KEPT_MS = 24 * 60 * 60_000;
/** Seconds suggested between polls (`Retry-After`, `retryAfterSeconds`). */
export const POLL_RETRY_AFTER_SECONDS = 5;
/** A worker sends a heartbeat for its running job this often. */
export const HEARTBEAT_MS = 10_000;
/** A running job without a heartbeat for this long has lost its worker (crash): it is retried. */
export const STALE_HEARTBEAT_MS = 60_000;
/** Past its deadline plus this, a running job is answered 500 `job_timeout` by anyone who looks. */
export const DEADLINE_GRACE_MS = 30_000;
