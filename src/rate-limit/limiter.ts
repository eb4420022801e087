import type pg from "pg";
import { RateLimiterPostgres, RateLimiterRes } from "rate-limiter-flexible";
import { ApiError } from "../http/errors.js";
import { BatchedCounterStore } from "./batched-store.js";
import type { LimitRule } from "./policy.js";

/** The state of one limit after a request was counted. */
export interface LimitState {
  rule: LimitRule;
  limit: number;
  remaining: number;
  resetAt: Date;
}

/** An exceeded limit: the 429 `RateLimitError` of openapi.yaml, with `retryAfter`. */
export class RateLimitExceeded extends ApiError {
  constructor(readonly state: LimitState) {
    const retryAfter = Math.max(1, Math.ceil((state.resetAt.getTime() - Date.now()) / 1000));
    super(429, "Rate limit exceeded", `Rate limit exceeded: ${state.rule.label}.`, undefined, {
      "Retry-After": String(retryAfter),
    });
  }

  get retryAfter(): number {
    return Number(this.headers["Retry-After"]);
  }

  /** `{error: "Rate limit exceeded", message, retryAfter}`, `retryAfter` equal to `Retry-After`. */
  override body(): Record<string, unknown> {
    return { error: this.code, message: this.message, retryAfter: this.retryAfter };
  }
}

/**
 * Counts requests in Postgres (table `rate_limits`) through rate-limiter-flexible, so every API
 * process shares the same counters. Concurrent counts share round trips (BatchedCounterStore).
 */
export class RateLimits {
  private readonly limiters = new Map<string, RateLimiterPostgres>();
  private readonly store: BatchedCounterStore;

  constructor(pool: pg.Pool) {
    this.store = new BatchedCounterStore(pool);
  }

  private limiterFor(rule: LimitRule): RateLimiterPostgres {
    let limiter = this.limiters.get(rule.name);
    if (!limiter) {
      limiter = new RateLimiterPostgres({
        storeClient: this.store,
        storeType: "pool",
        tableName: "rate_limits",
        tableCreated: true,
        keyPrefix: rule.name,
        points: rule.points,
        duration: rule.durationSeconds,
        clearExpiredByTimeout: false,
      });
      this.limiters.set(rule.name, limiter);
    }
    return limiter;
  }

  /**
   * Counts one request toward every rule (each with its subject: key id, account id or IP).
   * Resolves with the most specific rule's state; throws RateLimitExceeded for the most specific
   * rule that is exceeded.
   */
  async consume(rules: { rule: LimitRule; subject: string }[]): Promise<LimitState | undefined> {
    const results = await Promise.all(
      rules.map(async ({ rule, subject }) => {
        try {
          const res = await this.limiterFor(rule).consume(subject, 1);
          return { rule, res, exceeded: false };
        } catch (err) {
          if (err instanceof RateLimiterRes) return { rule, res: err, exceeded: true };
          throw err;
        }
      }),
    );
    const toState = ({ rule, res }: { rule: LimitRule; res: RateLimiterRes }): LimitState => ({
      rule,
      limit: rule.points,
      remaining: Math.max(0, res.remainingPoints),
      resetAt: new Date(Date.now() + Math.max(0, res.msBeforeNext)),
    });
    const exceeded = results.filter((r) => r.exceeded);
    const last = exceeded.at(-1);
    if (last) throw new RateLimitExceeded(toState(last));
    const mostSpecific = results.at(-1);
    return mostSpecific ? toState(mostSpecific) : undefined;
  }
}

/**
 * Writes the headers of a limit state: `X-RateLimit-*`, and the same limit as the IETF fields of
 * draft-ietf-httpapi-ratelimit-headers (structured field lists): `RateLimit-Policy:
 * "<name>";q=<requests>;w=<window seconds>` and `RateLimit: "<name>";r=<remaining>;t=<seconds to
 * the reset>` (docs/contract.md).
 */
export function rateLimitHeaders(state: LimitState, now = Date.now()): Record<string, string> {
  const name = `"${state.rule.name}"`;
  const secondsLeft = Math.max(0, Math.ceil((state.resetAt.getTime() - now) / 1000));
  return {
    "X-RateLimit-Limit": String(state.limit),
    "X-RateLimit-Remaining": String(state.remaining),
    "X-RateLimit-Reset": state.resetAt.toISOString(),
    "RateLimit-Policy": `${name};q=${state.limit};w=${state.rule.durationSeconds}`,
    RateLimit: `${name};r=${state.remaining};t=${secondsLeft}`,
  };
}
