import { ApiError, errors } from "../http/errors.js";

/** How long a charge waits for a lock before answering 429 charge_in_progress. */
export const CHARGE_LOCK_TIMEOUT_MS = 2_000;
/** Seconds a client is told to wait after charge_in_progress. */
export const CHARGE_RETRY_AFTER = 30;

/** 429 `charge_in_progress` with Retry-After 30: a charge's lock was not free within 2 seconds. */
export function chargeInProgress(): ApiError {
  return new ApiError(
    429,
    "charge_in_progress",
    `Another request of this account is charging credits; retry in ${CHARGE_RETRY_AFTER} seconds. Nothing was charged.`,
    undefined,
    { "Retry-After": String(CHARGE_RETRY_AFTER) },
  );
}

/**
 * 402 `insufficient_credits` of a charge whose delivery was capped at the balance it read before
 * (see spendable.ts), which a concurrent request spent meanwhile.
 */
export function balanceSpentMeanwhile(): ApiError {
  return errors.insufficientCredits(
    "A concurrent request of this account spent the balance first; nothing was charged.",
  );
}
