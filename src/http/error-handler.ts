import type { ErrorRequestHandler } from "express";
import type { Logger } from "pino";
import { RateLimitExceeded } from "../rate-limit/limiter.js";
import { ApiError, type ErrorDetail } from "./errors.js";

interface ValidatorErrorItem {
  path?: string;
  message: string;
}

interface ValidatorError {
  status: number;
  message?: string;
  errors?: ValidatorErrorItem[];
}

function isValidatorError(err: unknown): err is ValidatorError {
  return (
    typeof err === "object" &&
    err !== null &&
    "status" in err &&
    Array.isArray((err as ValidatorError).errors)
  );
}

/** `/body/urls/3` or `.body.urls[3]` -> `["body", "urls", "3"]`. */
export function detailPath(path: string | undefined): string[] {
  if (!path) return [];
  return path
    .replace(/\[(\w+)\]/g, ".$1")
    .split(/[./]/)
    .filter((part) => part.length > 0);
}

function toDetails(items: ValidatorErrorItem[]): ErrorDetail[] {
  return items.map((item) => ({ path: detailPath(item.path), message: item.message }));
}

/** Turns a request-validation failure into the documented error (code per endpoint family). */
function fromValidator(err: ValidatorError, path: string): ApiError {
  const details = toDetails(err.errors ?? []);
  if (err.status === 404 || err.status === 405) return new ApiError(404, "not_found", "No such endpoint.");
  // POST /enrichments reports its validation errors as invalid_request (see the document's Errors).
  const code = path.startsWith("/api/v1/enrichments") ? "invalid_request" : "validation_error";
  if (err.status === 415) {
    return new ApiError(
      400,
      code,
      "The request body must be JSON (Content-Type: application/json).",
      details,
    );
  }
  if (err.status === 413) return new ApiError(400, code, "The request body is too large.", details);
  if (err.status >= 400 && err.status < 500) {
    const summary = details.map((d) => `${d.path.join(".")}: ${d.message}`).join("; ");
    return new ApiError(400, code, summary ? `Invalid request: ${summary}` : "Invalid request.", details);
  }
  return new ApiError(500, "internal_error", "An unexpected error occurred.");
}

/** The one place where errors become HTTP answers. Unknown errors never leak their message. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) {
      logger.error({ err, reqId: req.id }, "error after the answer started");
      res.destroy();
      return;
    }
    let apiError: ApiError;
    if (err instanceof ApiError) apiError = err;
    else if ((err as { type?: string }).type === "entity.parse.failed") {
      apiError = new ApiError(400, "validation_error", "The request body is not valid JSON.", [
        { path: ["body"], message: "malformed JSON" },
      ]);
    } else if ((err as { type?: string }).type === "entity.too.large") {
      apiError = new ApiError(400, "validation_error", "The request body is too large.", [
        { path: ["body"], message: "too large" },
      ]);
    } else if (isValidatorError(err)) {
      apiError = fromValidator(err, req.path);
      if (apiError.status === 500) logger.error({ err, reqId: req.id }, "validator failure");
    } else {
      logger.error({ err, reqId: req.id }, "unhandled error");
      apiError = new ApiError(500, "internal_error", "An unexpected error occurred.");
    }
    for (const [name, value] of Object.entries(apiError.headers)) res.setHeader(name, value);
    if (apiError instanceof RateLimitExceeded) {
      res
        .status(429)
        .json({ error: apiError.code, message: apiError.message, retryAfter: apiError.retryAfter });
      return;
    }
    const body: { error: string; message: string; details?: ErrorDetail[] } = {
      error: apiError.code,
      message: apiError.message,
    };
    if (apiError.details && apiError.details.length > 0) body.details = apiError.details;
    res.status(apiError.status).json(body);
    void next;
  };
}
