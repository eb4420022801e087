/** One problem of an invalid request, as the API reports it. */
export interface ErrorDetail {
  path: string[];
  message: string;
}

/**
 * An error that becomes the documented `{error, message, details?}` answer. Services throw these;
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
