import type { RequestHandler } from "express";
import type { OperationId } from "../http/contract.js";
import { callerOf, operationOf } from "../http/request-state.js";
import { rateLimitHeaders, type RateLimits } from "./limiter.js";
import { limitsFor } from "./policy.js";

/**
 * Counts the request toward its operation's limits before anything runs (after authentication:
 * the counters are per key, per account or per IP), sets the X-RateLimit-* headers of the most
 * specific limit, and refuses with 429 when one is exceeded.
 */
export function rateLimit(rateLimits: RateLimits): RequestHandler {
  return async (req, res, next) => {
    const operation = operationOf(res);
    const rules = limitsFor(operation.operationId as OperationId, operation.requiresKey);
    if (rules.length === 0) return next();
    const caller = callerOf(res);
    const subjects = rules.map((rule) => ({
      rule,
      subject:
        rule.per === "key"
          ? `k${caller?.keyId}`
          : rule.per === "account"
            ? `a${caller?.accountId}`
            : `ip${req.ip}`,
    }));
    try {
      const state = await rateLimits.consume(subjects);
      if (state) res.set(rateLimitHeaders(state));
    } catch (err) {
      const exceeded = err as { state?: Parameters<typeof rateLimitHeaders>[0] };
      if (exceeded.state) res.set(rateLimitHeaders(exceeded.state));
      throw err;
    }
    next();
  };
}
