import { ApiError, errors } from "../http/errors.js";

/** Seconds a client waits before trying again when the file store cannot be reached. */
export const STORAGE_RETRY_AFTER_SECONDS = 30;

/**
 * 503 `service_unavailable` with `Retry-After: 30`: the file store did not answer or refused the
 * call. The store's own error stays in `cause` for the logs; the answer never shows it.
 */
export function storageUnavailable(cause: unknown): ApiError {
  const err = errors.serviceUnavailable(
    "File storage is unavailable right now; try again shortly.",
    STORAGE_RETRY_AFTER_SECONDS,
  );
  (err as Error & { cause?: unknown }).cause = cause;
  return err;
}

/** The store answered that there is no such object (404 `NoSuchKey` / `NotFound`). */
export function isMissingObject(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const { name, $metadata } = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return name === "NoSuchKey" || name === "NotFound" || $metadata?.httpStatusCode === 404;
}
