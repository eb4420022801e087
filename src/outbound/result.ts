import { OutboundRefusedError } from "./destination.js";

/** What one outbound POST came to. */
export interface PostResult {
  /** The receiver answered 2xx: the only success (a 3xx is not followed and counts as a failure). */
  ok: boolean;
  /** The answer's status; null when there was no answer. */
  statusCode: number | null;
  /** From the start of the call to the end of the answer (or the failure), in whole milliseconds. */
  latencyMs: number;
  /** The first `maxResponseChars` characters of the answer, decoded as UTF-8; null without an answer. */
  responseBody: string | null;
  /** The answer's `Retry-After` in seconds (an HTTP-date counts from now); null if absent or invalid. */
  retryAfterSeconds: number | null;
  /**
   * Why there was no answer ("timed out after 8 s", "refused: ...", "connection refused"); null
   * whenever the receiver answered, 2xx or not (see `describeFailure` for a non-2xx answer).
   */
  error: string | null;
}

/** Characters of a non-2xx answer kept in the service's `data.error`. */
const DESCRIBED_CHARS = 500;

/**
 * The service's documented `data.error` of an attempt: null for a 2xx; for another answer its first
 * 500 characters, or `HTTP <status>` when it has no text; without an answer, why not.
 */
export function describeFailure(result: PostResult): string | null {
  if (result.ok) return null;
  if (result.statusCode === null) return result.error ?? "no answer";
  const body = result.responseBody ?? "";
  return body.trim() === "" ? `HTTP ${result.statusCode}` : firstChars(body, DESCRIBED_CHARS);
}

/** The first `count` characters (code points, so a pair of surrogates is never split). */
export function firstChars(text: string, count: number): string {
  if (text.length <= count) return text;
  let end = 0;
  for (let kept = 0; kept < count && end < text.length; kept += 1) {
    end += (text.codePointAt(end) ?? 0) > 0xffff ? 2 : 1;
  }
  return text.slice(0, end);
}

/**
 * `Retry-After` in seconds from `now`: delay-seconds, or an HTTP-date (all three formats start with
 * a day name; a date in the past is 0). Anything else is null, so a receiver cannot push a retry
 * somewhere odd with a malformed value.
 */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  const text = value?.trim();
  if (!text) return null;
  if (/^\d+$/.test(text)) {
    const seconds = Number(text);
    return Number.isSafeInteger(seconds) ? seconds : null;
  }
  if (!/^[A-Za-z]{3}/.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/** Short reasons for common network failures, by Node's error code. */
const REASONS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EPIPE: "connection reset",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found (temporary DNS failure)",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ERR_INVALID_CHAR: "invalid request header",
  ERR_INVALID_HTTP_TOKEN: "invalid request header",
  // undici's refusal of a request it cannot send: here always a header value (the URL is checked first).
  UND_ERR_INVALID_ARG: "invalid request header",
  UND_ERR_SOCKET: "connection closed",
};

/** A short, customer-safe reason for a failed attempt without an answer. */
export function failureReason(err: unknown): string {
  if (err instanceof OutboundRefusedError) return `refused: ${err.reason}`;
  // Connecting to several addresses (happy eyeballs) fails with an AggregateError of them all.
  const cause = err instanceof AggregateError && !codeOf(err) ? (err.errors[0] as unknown) : err;
  const code = codeOf(cause);
  const known = code ? REASONS[code] : undefined;
  if (known) return known;
  if (code?.startsWith("HPE_")) return "invalid HTTP answer";
  const message = cause instanceof Error ? cause.message : String(cause);
  if (code && /CERT|TLS|SSL/.test(code)) return `TLS: ${message}`;
  return firstChars(message, 200);
}

function codeOf(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null || !("code" in err)) return undefined;
  return typeof err.code === "string" ? err.code : undefined;
}
