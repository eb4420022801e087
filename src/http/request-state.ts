import { randomBytes, timingSafeEqual } from "node:crypto";
import type { RequestHandler, Response } from "express";
import type { Caller } from "./contract.js";
import { errors } from "./errors.js";
import type { MatchedOperation, SpecOperation, SpecRoutes } from "./spec.js";

/**
 * What the middleware chain learns about a request, kept on `res.locals` under these names only:
 * when it arrived, its contract operation, and its authenticated caller.
 */
interface RequestState {
  arrivedAt?: number;
  matched?: MatchedOperation;
  caller?: Caller;
  rawBody?: Buffer;
  /** A decision the request waits for before its handler runs or any answer (see holdUntil). */
  gate?: Promise<void>;
}

const state = (res: Response): RequestState => res.locals as RequestState;

/** First middleware: the arrival time (a long-running request's `Prefer: wait` counts from it). */
export const markArrival: RequestHandler = (_req, res, next) => {
  state(res).arrivedAt = Date.now();
  next();
};

/** When the request arrived (ms since epoch). */
export function arrivalOf(res: Response): number {
  return state(res).arrivedAt ?? Date.now();
}

/** Finds the contract operation of the request; an unknown endpoint answers 404 before anything else. */
export function matchOperation(routes: SpecRoutes): RequestHandler {
  return (req, res, next) => {
    const matched = routes.match(req.method, req.path);
    if (!matched) throw errors.notFound("No such endpoint.");
    state(res).matched = matched;
    next();
  };
}

/** The request's operation and raw path parameters (set by matchOperation), if any. */
export function matchedOf(res: Response): MatchedOperation | undefined {
  return state(res).matched;
}

/** The request's operation (set by matchOperation). */
export function operationOf(res: Response): SpecOperation {
  const matched = state(res).matched;
  if (!matched) throw new Error("the request has no contract operation (matchOperation runs first)");
  return matched.operation;
}

/**
 * Lets the chain go on while `decision` is taken (the rate limits' counting round trip runs while
 * the body is read and the request validated): the handler runs only once it passes (passGate),
 * and an error answer waits for it too, its own error taking the place of any later one
 * (gateError), so the answer is what it would be had the chain waited for it.
 */
export function holdUntil(res: Response, decision: Promise<void>): void {
  decision.catch(() => undefined);
  state(res).gate = decision;
}

/** Waits for the request's gate (holdUntil); the middleware before the handler. */
export const passGate: RequestHandler = (_req, res, next) => {
  const gate = state(res).gate;
  if (!gate) return next();
  gate.then(() => next(), next);
};

/** The gate's error when it fails (it comes first), else `err`; never rejects. */
export async function gateError(res: Response, err: unknown): Promise<unknown> {
  const gate = state(res).gate;
  if (!gate) return err;
  return gate.then(
    () => err,
    (gateErr: unknown) => gateErr,
  );
}

/** Records the authenticated caller (src/auth/middleware.ts). */
export function setCaller(res: Response, caller: Caller): void {
  state(res).caller = caller;
}

/** The authenticated caller, or undefined for a request without a key. */
export function callerOf(res: Response): Caller | undefined {
  return state(res).caller;
}

/**
 * The `verify` hook of the JSON body parser that keeps the raw body bytes of the given operations
 * (a payment processor's webhook checks its signature over them), and of no other.
 */
export function keepRawBody(operationIds: readonly string[]) {
  return (_req: unknown, res: Response, buf: Buffer): void => {
    const operationId = state(res).matched?.operation.operationId;
    if (operationId !== undefined && operationIds.includes(operationId)) state(res).rawBody = buf;
  };
}

/** The raw body kept by keepRawBody, if any. */
export function rawBodyOf(res: Response): Buffer | undefined {
  return state(res).rawBody;
}

/**
 * The header that marks the requests the MCP server makes on a tool's behalf (src/mcp/), to its
 * own process: its value is this process's random token, so no client can set it.
 */
export const MCP_CALL_HEADER = "x-svc-mcp-call";
export const MCP_CALL_TOKEN = randomBytes(32).toString("hex");

/** Whether the request is a tool call of the MCP server (its caller's channel is `mcp`). */
export function cameThroughMcp(req: { headers: Record<string, string | string[] | undefined> }): boolean {
  const value = req.headers[MCP_CALL_HEADER];
  if (typeof value !== "string" || value.length !== MCP_CALL_TOKEN.length) return false;
  return timingSafeEqual(Buffer.from(value), Buffer.from(MCP_CALL_TOKEN));
}
