import { ApiError } from "../../http/errors.js";
import { firstChars } from "../../outbound/index.js";

/**
 * A CRM API call that failed: its HTTP status (null when nothing answered), the CRM's message,
 * its answer's first 1,000 characters and, for a 429, the wait it asked for.
 */
export class CrmApiError extends Error {
  constructor(
    readonly statusCode: number | null,
    message: string,
    readonly responseBody: string | null = null,
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
    this.name = "CrmApiError";
  }

  /** The CRM refused the authorization itself (a token endpoint's 400 / 401). */
  get authorizationRefused(): boolean {
    return this.statusCode === 400 || this.statusCode === 401;
  }
}

/** The CRM authorization is gone (refresh refused): the integration now needs attention. */
export class CrmAuthorizationLostError extends CrmApiError {
  constructor(statusCode: number | null, message: string) {
    super(statusCode, `The CRM authorization was lost (${message}); reconnect the integration.`);
    this.name = "CrmAuthorizationLostError";
  }
}

/** 502 `provider_error` for a failed CRM call of the field-mapping, pipeline or deal-field routes. */
export function providerError(err: CrmApiError): ApiError {
  const status = err.statusCode === null ? "no answer" : `HTTP ${err.statusCode}`;
  return new ApiError(
    502,
    "provider_error",
    `The CRM's API failed (${status}): ${firstChars(err.message, 300)}`,
  );
}

/** Seconds to wait after a CRM 429: its `Retry-After`, else its interval or reset hint, else 10. */
export function retryAfterFrom(headers: Record<string, string | undefined>): number {
  const get = (name: string) => {
    const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
    return key === undefined ? undefined : headers[key];
  };
  const retryAfter = Number(get("retry-after"));
  if (Number.isFinite(retryAfter) && retryAfter > 0) return Math.min(Math.ceil(retryAfter), 86_400);
  const intervalMs = Number(get("x-hubspot-ratelimit-interval-milliseconds"));
  if (Number.isFinite(intervalMs) && intervalMs > 0) return Math.ceil(intervalMs / 1000);
  // Pipedrive: seconds until its rate-limit window resets.
  const reset = Number(get("x-ratelimit-reset"));
  if (Number.isFinite(reset) && reset > 0 && reset <= 86_400) return Math.ceil(reset);
  return 10;
}

/** A short text of a CRM's error answer: its `message` member, else the text itself. */
export function crmMessage(body: unknown, fallback: string): string {
  if (body && typeof body === "object") {
    const b = body as Record<string, unknown>;
    for (const key of ["message", "error_description", "error", "errorCode"]) {
      if (typeof b[key] === "string" && b[key]) return b[key] as string;
    }
    if (Array.isArray(body) && body[0] && typeof body[0] === "object") {
      return crmMessage(body[0], fallback);
    }
  }
  if (typeof body === "string" && body.trim()) return firstChars(body.trim(), 300);
  return fallback;
}

/** The first 1,000 characters of an answer body as text. */
export function bodyText(body: unknown): string | null {
  if (body === undefined || body === null) return null;
  return firstChars(typeof body === "string" ? body : JSON.stringify(body), 1_000);
}
