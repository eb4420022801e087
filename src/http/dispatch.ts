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

/** Deepest nesting of a body searched for NUL characters (deeper values are not read anyway). */
const MAX_DEPTH = 32;

/**
 * Text values holding the NUL character (U+0000), which PostgreSQL text cannot store or compare:
 * refused as invalid input rather than failing in the database.
 */
function withNul(value: unknown, path: string[], found: ErrorDetail[], depth = 0): void {
  if (typeof value === "string") {
    if (value.includes("\u0000"))
      found.push({ path, message: "must not contain the NUL character (U+0000)" });
  } else if (Array.isArray(value) && depth < MAX_DEPTH) {
    value.forEach((item, i) => withNul(item, [...path, String(i)], found, depth + 1));
  } else if (value !== null && typeof value === "object" && depth < MAX_DEPTH) {
    for (const [key, item] of Object.entries(value)) withNul(item, [...path, key], found, depth + 1);
  }
}

/** Problems of a request's values that the contract validator lets through. */
function unusableValues(
  req: Request,
  operation: SpecOperation,
  params: Record<string, unknown>,
): ErrorDetail[] {
  const found = nonFinite(operation, req.query, params);
  withNul(params, ["params"], found);
  withNul(req.query, ["query"], found);
  withNul(req.body, ["body"], found);
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
  const problems = unusableValues(req, operation, params);
  if (problems.length > 0) {
    const summary = problems.map((p) => `${p.path.join(".")}: ${p.message}`).join("; ");
    throw invalidInput(operation, `Invalid request: ${summary}`, problems);
  }
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

/** The handler of the request's operation, or undefined when it is not built. */
function handlerOf(handlers: OperationHandlers, res: Response): Handler<OperationId> | undefined {
  const operation = matchedOf(res)?.operation;
  const handler = operation && handlers[operation.operationId as OperationId];
  return handler === undefined || handler === NOT_BUILT ? undefined : (handler as Handler<OperationId>);
}

/**
 * Answers 501 `not_implemented` for an operation marked `NOT_BUILT` in the registry, whatever its
 * input (after authentication and rate limits, before the body is read and validated).
 */
export function refuseNotBuilt(handlers: OperationHandlers): RequestHandler {
  return (_req, res, next) => {
    if (!handlerOf(handlers, res)) throw notBuilt();
    next();
  };
}

/**
 * The end of the middleware chain: calls the registered handler of the request's contract
 * operation with its typed request and writes the answer it returns. Runs after the contract
 * validator, so the request already matches `openapi.yaml`.
 */
export function dispatchOperations(handlers: OperationHandlers): RequestHandler {
  return async (req, res) => {
    const matched = matchedOf(res);
    const handler = handlerOf(handlers, res);
    if (!matched || !handler) throw notBuilt();
    const answer = await handler(operationRequest(req, res, matched));
    await writeAnswer(res, answer as WritableAnswer);
  };
}
