import type { Request, RequestHandler, Response } from "express";
import {
  NOT_BUILT,
  type Handler,
  type OperationHandlers,
  type OperationId,
  type OperationRequest,
} from "./contract.js";
import {
  writeFileAnswer,
  writeJsonAnswer,
  writeSerialisedJsonAnswer,
  type WritableAnswer,
} from "./answer.js";
import { describeDetails, errors, invalidInput, notBuilt, type ErrorDetail } from "./errors.js";
import { arrivalOf, callerOf, matchedOf, rawBodyOf } from "./request-state.js";
import type { MatchedOperation, SpecOperation } from "./spec.js";

/**
 * The path parameters of the request, decoded and typed as the contract declares them (the
 * contract validator has already checked them).
 */
function pathParams({ operation, rawPathParams }: MatchedOperation): Record<string, string | number> {
  const params: Record<string, string | number> = {};
  for (const param of operation.pathParameters) {
    const text = decodeURIComponent(rawPathParams[param.name] ?? "");
    params[param.name] = param.type === "string" ? text : Number(text);
  }
  return params;
}

/** The declared request headers of the operation, by their declared names. */
function declaredHeaders(req: Request, operation: SpecOperation): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const param of operation.headerParameters) {
    const value = req.get(param.name);
    if (value !== undefined) headers[param.name] = value;
  }
  return headers;
}

/**
 * Numbers the validator let through that no handler can use: it coerces `1e309` to Infinity and
 * then skips its range and format checks (ajv checks numbers only when they are finite).
 */
function nonFinite(
  operation: SpecOperation,
  query: unknown,
  params: Record<string, unknown>,
  found: ErrorDetail[],
) {
  for (const param of operation.numericParameters) {
    const source = param.in === "path" ? params : ((query ?? {}) as Record<string, unknown>);
    const values = ([] as unknown[]).concat(source[param.name]);
    if (values.some((value) => typeof value === "number" && !Number.isFinite(value))) {
      found.push({
        path: [param.in === "path" ? "params" : "query", param.name],
        message: "must be a finite number",
      });
    }
  }
}

/** Deepest nesting of a body searched for NUL characters (deeper values are not read anyway). */
const MAX_DEPTH = 32;

/**
 * Text values holding the NUL character (U+0000), which PostgreSQL text cannot store or compare:
 * refused as invalid input rather than failing in the database. `path` is the stack of keys
 * leading to `value` (copied only for a value that is reported).
 */
function withNul(value: unknown, path: string[], found: ErrorDetail[]): void {
  if (typeof value === "string") {
    if (value.includes("\u0000"))
      found.push({ path: [...path], message: "must not contain the NUL character (U+0000)" });
  } else if (value !== null && typeof value === "object" && path.length <= MAX_DEPTH) {
    for (const key in value) {
      path.push(key);
      withNul((value as Record<string, unknown>)[key], path, found);
      path.pop();
    }
  }
}

/** Problems of a request's values that the contract validator lets through. */
function unusableValues(
  req: Request,
  operation: SpecOperation,
  params: Record<string, unknown>,
): ErrorDetail[] {
  const found: ErrorDetail[] = [];
  nonFinite(operation, req.query, params, found);
  withNul(params, ["params"], found);
  withNul(req.query, ["query"], found);
  withNul(req.body, ["body"], found);
  return found;
}

/** A signal that aborts when the client goes away before its answer has been written. */
function clientGone(res: Response): AbortSignal {
  const controller = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** The HTTP request as it came (`OperationRequest.http`); the client-gone signal is made on first use. */
class HttpPart {
  readonly method: string;
  readonly path: string;
  readonly url: string;
  readonly rawHeaders: Request["headers"];
  readonly arrivedAt: number;
  readonly rawBody: Buffer | undefined;
  private gone: AbortSignal | undefined;

  constructor(
    req: Request,
    private readonly res: Response,
  ) {
    this.method = req.method;
    this.path = req.path;
    this.url = req.originalUrl;
    this.rawHeaders = req.headers;
    this.arrivedAt = arrivalOf(res);
    this.rawBody = rawBodyOf(res);
  }

  /** Aborts when the client goes away (only long-running requests and polls wait on it). */
  get signal(): AbortSignal {
    this.gone ??= clientGone(this.res);
    return this.gone;
  }
}

/** The typed request of an operation (one class, so every request has the same shape). */
class BoundRequest {
  readonly http: HttpPart;

  constructor(
    readonly operation: SpecOperation,
    readonly params: Record<string, string | number>,
    readonly query: unknown,
    readonly body: unknown,
    readonly headers: Record<string, string>,
    req: Request,
    private readonly res: Response,
  ) {
    this.http = new HttpPart(req, res);
  }

  /** The authenticated caller; 401 for an operation without a key. */
  get caller() {
    const caller = callerOf(this.res);
    if (!caller) throw errors.unauthorized();
    return caller;
  }
}

/** Whether an input part holds nothing to check (no path parameters, no query, no body). */
function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  for (const _key in value as object) return false;
  return true;
}

/** The typed request of an operation. */
function operationRequest(req: Request, res: Response, matched: MatchedOperation): BoundRequest {
  const { operation } = matched;
  const params = operation.pathParameters.length > 0 ? pathParams(matched) : {};
  if (!(isEmpty(params) && isEmpty(req.query) && isEmpty(req.body))) {
    const problems = unusableValues(req, operation, params);
    if (problems.length > 0) {
      throw invalidInput(operation, describeDetails(problems), problems);
    }
  }
  const headers = operation.headerParameters.length > 0 ? declaredHeaders(req, operation) : {};
  return new BoundRequest(operation, params, req.query, req.body, headers, req, res);
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
 * validator, so the request already matches `openapi.yaml`. `answersChecked`: the validator checks
 * answers too (tests), so JSON answers go through what it watches (writeJsonAnswer).
 */
export function dispatchOperations(
  handlers: OperationHandlers,
  options: { answersChecked?: boolean } = {},
): RequestHandler {
  const checked = options.answersChecked === true;
  return async (req, res) => {
    const matched = matchedOf(res);
    const handler = handlerOf(handlers, res);
    if (!matched || !handler) throw notBuilt();
    const request = operationRequest(req, res, matched) as unknown as OperationRequest<OperationId>;
    const answer = (await handler(request)) as WritableAnswer;
    if ("file" in answer) await writeFileAnswer(res, answer);
    else if ("json" in answer) await writeSerialisedJsonAnswer(res, answer);
    else writeJsonAnswer(res, answer, checked);
  };
}
