import type { RequestHandler } from "express";
import type { OperationId } from "../http/contract.js";
import { callerOf, holdUntil, operationOf } from "../http/request-state.js";
import { rateLimitHeaders, type RateLimits } from "./limiter.js";
import { limitsFor } from "./policy.js";

/**
 * Counts the request toward its operation's limits (after authentication: the counters are per
 * key, per account or per IP), sets the X-RateLimit-* headers of the most specific limit, and
 * refuses with 429 when one is exceeded. The count's round trip runs while the rest of the chain
 * reads and validates the request; the handler, and any answer, wait for it (holdUntil), so a
 * refused request runs nothing and gets the 429 whatever else was wrong with it.
 */
export function rateLimit(rateLimits: RateLimits): RequestHandler {
  return (req, res, next) => {
    const operation = operationOf(res);
    const rules = limitsFor(operation.operationId as OperationId, operation.requiresKey);
    if (rules.length === 0) return next();
    const caller = callerOf(res);
    const subjects = rules.map((rule) => ({
      rule,
      subject:
        rule.per === "key"
          ? caller?.channel === "dashboard"
            ? `s${caller.sessionId}`
            : `k${caller?.keyId}`
          : rule.per === "account"
            ? `a${caller?.accountId}`
            : `ip${req.ip}`,
    }));
    const decision = rateLimits.consume(subjects).then(
      (state) => {
        if (state) res.set(rateLimitHeaders(state));
      },
      (err: unknown) => {
        const exceeded = err as { state?: Parameters<typeof rateLimitHeaders>[0] };
        if (exceeded.state) res.set(rateLimitHeaders(exceeded.state));
        throw err;
      },
    );
    holdUntil(res, decision);
    next();
  };
}
