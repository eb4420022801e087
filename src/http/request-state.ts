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

/** Records the authenticated caller (src/auth/middleware.ts). */
export function setCaller(res: Response, caller: Caller): void {
  state(res).caller = caller;
}

/** The authenticated caller, or undefined for a request without a key. */
export function callerOf(res: Response): Caller | undefined {
  return state(res).caller;
}
