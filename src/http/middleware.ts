import type { RequestHandler } from "express";
import { authenticate, bearerToken } from "../auth/service.js";
import { rateLimitHeaders } from "../rate-limit/limiter.js";
import { limitsFor } from "../rate-limit/policy.js";
import type { AppContext } from "./context.js";
import { ApiError } from "./errors.js";
import type { SpecOperation, SpecRoutes } from "./spec.js";

/** Finds the contract operation of the request; unknown endpoints answer 404 before anything else. */
export function matchOperation(routes: SpecRoutes): RequestHandler {
  return (req, res, next) => {
    const operation = routes.match(req.method, req.path);
    if (!operation) throw new ApiError(404, "not_found", "No such endpoint.");
    res.locals.operation = operation;
    next();
  };
}

/** Authenticates keyed operations (401 / 403 as the document says). */
export function authenticateKey(ctx: AppContext): RequestHandler {
  return async (req, res, next) => {
    const operation = res.locals.operation as SpecOperation;
    if (!operation.requiresKey) return next();
    res.locals.auth = await authenticate(ctx.db, bearerToken(req.headers.authorization), ctx.keyCache);
    next();
  };
}

/**
 * Counts the request toward its limits before anything runs, sets the X-RateLimit-* headers of
 * the most specific limit, and refuses with 429 when one is exceeded.
 */
export function rateLimit(ctx: AppContext): RequestHandler {
  return async (req, res, next) => {
    const operation = res.locals.operation as SpecOperation;
    const rules = limitsFor(req.method, operation.path, operation.requiresKey);
    if (rules.length === 0) return next();
    const auth = res.locals.auth as { keyId: number; accountId: number } | undefined;
    const subjects = rules.map((rule) => ({
      rule,
      subject:
        rule.per === "key"
          ? `k${auth?.keyId}`
          : rule.per === "account"
            ? `a${auth?.accountId}`
            : `ip${req.ip}`,
    }));
    try {
      const state = await ctx.rateLimits.consume(subjects);
      if (state) res.set(rateLimitHeaders(state));
    } catch (err) {
      const exceeded = err as { state?: Parameters<typeof rateLimitHeaders>[0] };
      if (exceeded.state) res.set(rateLimitHeaders(exceeded.state));
      throw err;
    }
    next();
  };
}
