/** One problem of an invalid request, as the API reports it. */
export interface ErrorDetail {
  path: string[];
  message: string;
}

/**
 * An error that becomes the `{error, message, details?}` answer of openapi.yaml. Services throw these;
 * the error middleware writes them. Anything else becomes 500 `internal_error`.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }

  /** The answer body: `{error, message, details?}` (a subclass may add members). */
  body(): Record<string, unknown> {
    const body: { error: string; message: string; details?: ErrorDetail[] } = {
      error: this.code,
      message: this.message,
    };
    if (this.details && this.details.length > 0) body.details = this.details;
    return body;
  }
}

/** The error codes of the API, with their statuses and a factory for each. */
export const errors = {
  validation: (message: string, details?: ErrorDetail[]) =>
    new ApiError(400, "validation_error", message, details),
  badRequest: (message: string, details?: ErrorDetail[]) =>
    new ApiError(400, "bad_request", message, details),
  invalidRequest: (message: string, details?: ErrorDetail[]) =>
    new ApiError(400, "invalid_request", message, details),
  unauthorized: (message = "A valid API key is required: send Authorization: Bearer <API key>.") =>
    new ApiError(401, "unauthorized", message),
  forbidden: (message = "This account has no active or trialing paid subscription.") =>
    new ApiError(403, "forbidden", message),
  notFound: (message = "Not found.") => new ApiError(404, "not_found", message),
  conflict: (message: string) => new ApiError(409, "conflict", message),
  insufficientCredits: (message = "Not enough credits.") =>
    new ApiError(402, "insufficient_credits", message),
  serviceUnavailable: (message: string, retryAfterSeconds: number) =>
    new ApiError(503, "service_unavailable", message, undefined, {
      "Retry-After": String(retryAfterSeconds),
    }),
  internal: () => new ApiError(500, "internal_error", "An unexpected error occurred."),
};

/** The 400 codes an operation may declare for a request it cannot read, in order of preference. */
const INVALID_INPUT_CODES = ["validation_error", "invalid_request", "bad_request"] as const;

/**
 * 400 for input the operation cannot take, with the code the operation declares for it in the
 * contract (`validation_error` for most; `invalid_request` for `POST /enrichments`; `bad_request`
 * where that is the only 400 code, as on `POST /ai/generate-keywords`).
 */
export function invalidInput(
  operation: { errorCodes: ReadonlyMap<number, ReadonlySet<string>> } | undefined,
  message: string,
  details?: ErrorDetail[],
): ApiError {
  const declared = operation?.errorCodes.get(400);
  const code = INVALID_INPUT_CODES.find((c) => declared?.has(c)) ?? "validation_error";
  return new ApiError(400, code, message, details);
}

/** `Invalid request: <path>: <message>; ...`, the message of a 400 that lists its problems. */
export function describeDetails(details: ErrorDetail[], what = "Invalid request"): string {
  if (details.length === 0) return `${what}.`;
  return `${what}: ${details.map((d) => `${d.path.join(".")}: ${d.message}`).join("; ")}`;
}

/** 501 `not_implemented`: an operation of the contract marked not built in the handler registry. */
export function notBuilt(): ApiError {
  return new ApiError(501, "not_implemented", "This endpoint is not implemented yet.");
}
