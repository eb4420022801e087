import type { ErrorRequestHandler } from "express";
import type { Logger } from "pino";
import type { ContractViolation } from "./contract-violations.js";
import { ApiError, describeDetails, errors, invalidInput, type ErrorDetail } from "./errors.js";
import { gateError, matchedOf } from "./request-state.js";
import type { SpecOperation } from "./spec.js";
import { isDependencyUnavailable, UNAVAILABLE_RETRY_AFTER_SECONDS } from "./unavailable.js";

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

/** A request-validation failure as the 400 the operation declares, with `details`. */
function fromValidator(err: ValidatorError, operation: SpecOperation | undefined): ApiError {
  const details = toDetails(err.errors ?? []);
  if (err.status === 404 || err.status === 405) return new ApiError(404, "not_found", "No such endpoint.");
  if (err.status === 415) {
    return invalidInput(
      operation,
      "The request body must be JSON (Content-Type: application/json).",
      details,
    );
  }
  if (err.status === 413) return invalidInput(operation, "The request body is too large.", details);
  if (err.status >= 400 && err.status < 500) {
    return invalidInput(operation, describeDetails(details), details);
  }
  return new ApiError(500, "internal_error", "An unexpected error occurred.");
}

/** Whether the contract declares this error code for the operation and status (501: not built). */
function declared(operation: SpecOperation, error: ApiError): boolean {
  if (error.status === 501) return true;
  return operation.errorCodes.get(error.status)?.has(error.code) ?? false;
}

/**
 * The one place where errors become HTTP answers. Input the contract validator refused gets the
 * 400 code the operation declares; an error saying the database cannot be reached becomes 503
 * `service_unavailable` with `Retry-After` (`unavailable.ts`); other unknown errors become 500
 * `internal_error` without their message. An answer whose code the operation does not declare for its status is still sent, and
 * logged as a contract violation (and passed to `reportViolation`, which tests use to fail).
 */
export function errorHandler(
  logger: Logger,
  reportViolation?: (violation: ContractViolation) => void,
): ErrorRequestHandler {
  const answer = answerError(logger, reportViolation);
  return (err, req, res, next) => {
    // A decision the request was held for (its rate limits) answers first when it refuses it.
    gateError(res, err)
      .then((first) => answer(first, req, res, next))
      .catch(next);
  };
}

function answerError(
  logger: Logger,
  reportViolation?: (violation: ContractViolation) => void,
): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) {
      logger.error({ err, reqId: req.id }, "error after the answer started");
      res.destroy();
      return;
    }
    const operation = matchedOf(res)?.operation;
    let apiError: ApiError;
    if (err instanceof ApiError) apiError = err;
    else if ((err as { type?: string }).type === "entity.parse.failed") {
      apiError = invalidInput(operation, "The request body is not valid JSON.", [
        { path: ["body"], message: "malformed JSON" },
      ]);
    } else if ((err as { type?: string }).type === "entity.too.large") {
      // 413 `payload_too_large` where the operation declares it (POST /enrichments), else the
      // operation's 400.
      apiError = operation?.errorCodes.get(413)?.has("payload_too_large")
        ? new ApiError(413, "payload_too_large", "The request body is too large.")
        : invalidInput(operation, "The request body is too large.", [
            { path: ["body"], message: "too large" },
          ]);
    } else if (isValidatorError(err)) {
      apiError = fromValidator(err, operation);
      if (apiError.status === 500) logger.error({ err, reqId: req.id }, "validator failure");
    } else if (isDependencyUnavailable(err)) {
      // The database (or another dependency) cannot be reached: the client tries again later.
      logger.warn({ err, reqId: req.id }, "dependency unavailable");
      apiError = errors.serviceUnavailable(
        "The service cannot reach its database or another service it depends on right now; try again after Retry-After.",
        UNAVAILABLE_RETRY_AFTER_SECONDS,
      );
    } else {
      logger.error({ err, reqId: req.id }, "unhandled error");
      apiError = new ApiError(500, "internal_error", "An unexpected error occurred.");
    }
    if (operation && !declared(operation, apiError)) {
      const message = `${operation.operationId} does not declare ${apiError.status} ${apiError.code}`;
      logger.error({ reqId: req.id }, message);
      reportViolation?.({ method: req.method, path: req.originalUrl, status: apiError.status, message });
    }
    for (const [name, value] of Object.entries(apiError.headers)) res.setHeader(name, value);
    res.status(apiError.status).json(apiError.body());
    void next;
  };
}
