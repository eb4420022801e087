/**
 * Errors that say a dependency cannot be reached right now (the database stopped, restarting or
 * refusing connections), not that the request or the code is wrong: the error handler answers
 * them 503 `service_unavailable` with `Retry-After` instead of 500 (docs/reliability.md).
 */

/** Seconds a client is told to wait when the database cannot be reached. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * Socket errors of a connection that cannot be opened or was cut, and the PostgreSQL codes of a
 * server going away: 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now,
 * 53300 too_many_connections; class 08 (connection exception) is matched by its prefix.
 */
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "57P01",
  "57P02",
  "57P03",
  "53300",
]);

/** Messages node-postgres gives a connection lost or never opened (they carry no code). */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/,
  /connection error and is not queryable/,
  /^Client was closed and is not queryable/,
  /^timeout exceeded when trying to connect/,
  /^Cannot use a pool after calling end on the pool/,
];

/**
 * Whether `err` (or an error it was caused by, or one of an AggregateError's errors) says the
 * database or another dependency cannot be reached.
 */
export function isDependencyUnavailable(err: unknown, depth = 0): boolean {
  if (typeof err !== "object" || err === null || depth > 5) return false;
  const { code, message, cause, errors } = err as {
    code?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (typeof code === "string" && (UNAVAILABLE_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
  if (typeof message === "string" && UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message))) {
    return true;
  }
  if (Array.isArray(errors) && errors.some((e) => isDependencyUnavailable(e, depth + 1))) return true;
  return cause !== undefined && cause !== err && isDependencyUnavailable(cause, depth + 1);
}
