import type { Request, RequestHandler, Response } from "express";
import {
  NOT_BUILT,
  type Handler,
  type OperationHandlers,
  type OperationId,
  type OperationRequest,
} from "./contract.js";
import { writeAnswer, type WritableAnswer } from "./answer.js";
import { errors, invalidInput, notBuilt, type ErrorDetail } from "./errors.js";
import { arrivalOf, callerOf, matchedOf } from "./request-state.js";
import type { MatchedOperation, SpecOperation, SpecParameter } from "./spec.js";

const isNumeric = (param: SpecParameter) => param.type === "integer" || param.type === "number";

/**
 * The path parameters of the request, decoded and typed as the contract declares them (the
 * contract validator has already checked them).
 */
function pathParams({ operation, rawPathParams }: MatchedOperation): Record<string, string | number> {
  const params: Record<string, string | number> = {};
  for (const param of operation.parameters) {
    if (param.in !== "path") continue;
    const text = decodeURIComponent(rawPathParams[param.name] ?? "");
    params[param.name] = isNumeric(param) ? Number(text) : text;
  }
  return params;
}

/** The declared request headers of the operation, by their declared names. */
function declaredHeaders(req: Request, operation: SpecOperation): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const param of operation.parameters) {
    if (param.in !== "header") continue;
    const value = req.get(param.name);
    if (value !== undefined) headers[param.name] = value;
  }
  return headers;
}

/**
 * Numbers the validator let through that no handler can use: it coerces `1e309` to Infinity and
 * then skips its range and format checks (ajv checks numbers only when they are finite).
 */
function nonFinite(operation: SpecOperation, query: unknown, params: Record<string, unknown>): ErrorDetail[] {
  const found: ErrorDetail[] = [];
  for (const param of operation.parameters) {
    if (!isNumeric(param) || param.in === "header") continue;
    const source = param.in === "path" ? params : ((query ?? {}) as Record<string, unknown>);
    const values = ([] as unknown[]).concat(source[param.name]);
    if (values.some((value) => typeof value === "number" && !Number.isFinite(value))) {
      found.push({
        path: [param.in === "path" ? "params" : "query", param.name],
        message: "must be a finite number",
      });
    }
  }
  return found;
}

/** The typed request of an operation. */
function operationRequest(
  req: Request,
  res: Response,
  matched: MatchedOperation,
): OperationRequest<OperationId> {
  const { operation } = matched;
  const params = pathParams(matched);
  const problems = nonFinite(operation, req.query, params);
  if (problems.length > 0) throw invalidInput(operation, "The request has a number out of range.", problems);
  const gone = new AbortController();
  res.once("close", () => gone.abort());
  return {
    operation: operation as OperationRequest<OperationId>["operation"],
    params: params as never,
    query: req.query as never,
    body: req.body as never,
    headers: declaredHeaders(req, operation) as never,
    get caller() {
      const caller = callerOf(res);
      if (!caller) throw errors.unauthorized();
      return caller;
    },
    http: {
      method: req.method,
      path: req.path,
      url: req.originalUrl,
      rawHeaders: req.headers,
      arrivedAt: arrivalOf(res),
      signal: gone.signal,
    },
  };
}

/**
 * The end of the middleware chain: calls the registered handler of the request's contract
 * operation with its typed request and writes the answer it returns. An operation marked
 * `NOT_BUILT` answers 501 `not_implemented`. Runs after the contract validator, so the request
 * already matches `openapi.yaml`.
 */
export function dispatchOperations(handlers: OperationHandlers): RequestHandler {
  return async (req, res) => {
    const matched = matchedOf(res);
    if (!matched) throw errors.notFound("No such endpoint.");
    const handler = handlers[matched.operation.operationId as OperationId];
    if (handler === undefined || handler === NOT_BUILT) throw notBuilt();
    const request = operationRequest(req, res, matched);
    const answer = await (handler as Handler<OperationId>)(request);
    await writeAnswer(res, answer as WritableAnswer);
  };
}
