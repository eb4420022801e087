import { describe, expect, it } from "vitest";
import { rateLimitHeaders } from "../src/rate-limit/limiter.js";
import { LIMITS } from "../src/rate-limit/policy.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";

// Beside X-RateLimit-*, the IETF fields of draft-ietf-httpapi-ratelimit-headers describe the same
// limit: `RateLimit-Policy: "<name>";q=<quota>;w=<window>` and `RateLimit: "<name>";r=<left>;t=<s>`.
const t = useTestApp();

const POLICY = /^"([a-z_]+)";q=(\d+);w=(\d+)$/;
const STATE = /^"([a-z_]+)";r=(\d+);t=(\d+)$/;

function ietf(headers: Record<string, string>) {
  const policy = POLICY.exec(headers["ratelimit-policy"] ?? "");
  const state = STATE.exec(headers["ratelimit"] ?? "");
  expect(policy, headers["ratelimit-policy"]).not.toBeNull();
  expect(state, headers["ratelimit"]).not.toBeNull();
  return {
    policy: policy![1],
    quota: Number(policy![2]),
    window: Number(policy![3]),
    statePolicy: state![1],
    remaining: Number(state![2]),
    resetSeconds: Number(state![3]),
  };
}

describe("IETF RateLimit-Policy and RateLimit fields", () => {
  it("describe the same limit as X-RateLimit-* on a keyed answer", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t.request().get("/api/v1/me").set(auth).expect(200);
    const f = ietf(res.headers);
    expect(f).toMatchObject({ policy: "general", quota: 600, window: 60, statePolicy: "general" });
    expect(String(f.quota)).toBe(res.headers["x-ratelimit-limit"]);
    expect(String(f.remaining)).toBe(res.headers["x-ratelimit-remaining"]);
    const resetIn = (Date.parse(res.headers["x-ratelimit-reset"]!) - Date.now()) / 1000;
    expect(Math.abs(f.resetSeconds - resetIn)).toBeLessThanOrEqual(2);
  });

  it("name the most specific limit, also on the 429 that refuses a request", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const statuses: number[] = [];
    let last: Record<string, string> = {};
    for (let i = 0; i <= LIMITS.export.points; i += 1) {
      // Invalid bodies: the limit counts them before the body is checked.
      const res = await t.request().post("/api/v1/leads/export").set(auth).send({ fileType: "pdf" });
      statuses.push(res.status);
      last = res.headers;
      if (i === 0)
        expect(ietf(res.headers)).toMatchObject({ policy: "export", quota: 5, window: 60, remaining: 4 });
    }
    expect(statuses.at(-1)).toBe(429);
    expect(ietf(last)).toMatchObject({ policy: "export", quota: 5, remaining: 0 });
    expect(last["x-ratelimit-remaining"]).toBe("0");
  });

  it("are written from one limit state", () => {
    const now = Date.parse("2026-11-24T12:00:00Z");
    const headers = rateLimitHeaders(
      { rule: LIMITS.general, limit: 600, remaining: 12, resetAt: new Date(now + 41_200) },
      now,
    );
    expect(headers).toEqual({
      "X-RateLimit-Limit": "600",
      "X-RateLimit-Remaining": "12",
      "X-RateLimit-Reset": "2026-11-24T12:00:41.200Z",
      "RateLimit-Policy": '"general";q=600;w=60',
      RateLimit: '"general";r=12;t=42',
    });
  });
});
