import type { RequestHandler } from "express";
import * as OpenApiValidator from "express-openapi-validator";
import type { Logger } from "pino";
import type { ContractViolation } from "./contract-violations.js";
import "./validator-route-cache.js";

/**
 * express-openapi-validator on the contract: every request is checked against openapi.yaml
 * (all problems reported, unknown query parameters refused, formats checked) before its handler
 * runs. With `reportViolation`, every answer body is checked too (tests); a mismatch is logged and
 * reported.
 */
export function contractValidator(
  document: unknown,
  logger: Logger,
  reportViolation?: (violation: ContractViolation) => void,
): RequestHandler[] {
  return OpenApiValidator.middleware({
    apiSpec: withoutServiceCheckedTypes(structuredClone(document)) as never,
    validateApiSpec: false,
    validateRequests: { allErrors: true, allowUnknownQueryParameters: false },
    validateResponses: reportViolation
      ? {
          allErrors: true,
          onError: (err, _body, req) => {
            reportViolation({
              method: req.method,
              path: req.originalUrl,
              status: (err as { status?: number }).status ?? 500,
              message: err.message + JSON.stringify((err as { errors?: unknown }).errors ?? []),
            });
            logger.error({ err, path: req.originalUrl }, "response does not match openapi.yaml");
          },
        }
      : false,
    validateSecurity: false,
    validateFormats: true,
    // The contract has no multipart bodies: no upload parsing on every request.
    fileUploader: false,
  });
}

/** Keywords of a value the validator would check. */
const VALUE_KEYWORDS = ["type", "format", "pattern", "enum", "const", "minLength", "maxLength"];

/**
 * The contract marks with `x-checked-by-service` the values that are typed for clients but that
 * the service checks itself, with the error the source document names (for example the
 * lead-export-history `filters`: 400 `bad_request`, and not checked at all beside `trackingIds`).
 * The validator gets those schemas without their value keywords.
 */
export function withoutServiceCheckedTypes<T>(document: T): T {
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
    } else if (node && typeof node === "object") {
      const record = node as Record<string, unknown>;
      if (record["x-checked-by-service"] === true) {
        for (const keyword of VALUE_KEYWORDS) delete record[keyword];
      }
      Object.values(record).forEach(visit);
    }
  };
  visit(document);
  return document;
}
