/**
 * When a failed automatic delivery is attempted again (docs/events.md): at once, then after
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 24 h, each with up to 10% jitter. Eight attempts over
 * about 42 hours; a receiver's `Retry-After` postpones an attempt (never beyond 24 h).
 */
export const RETRY_DELAYS_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  24 * 3_600_000,
];

const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/**
 * The wait before the next attempt after `attemptsMade` failed attempts, or null when the
 * schedule is exhausted. `random` in [0, 1) spreads retries of many deliveries apart.
 */
export function nextAttemptDelayMs(
  attemptsMade: number,
  retryAfterSeconds: number | null,
  delays: readonly number[] = RETRY_DELAYS_MS,
  random: number = Math.random(),
): number | null {
  const base = delays[attemptsMade - 1];
  if (base === undefined) return null;
  const jittered = Math.round(base * (1 + 0.1 * random));
  const asked = retryAfterSeconds === null ? 0 : Math.min(retryAfterSeconds * 1000, MAX_RETRY_AFTER_MS);
  return Math.max(jittered, asked);
}

/** Failed automatic attempts in a row after which an integration needs attention. */
export const FAILURES_BEFORE_ATTENTION = 5;
