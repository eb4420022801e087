import { describe, expect, it } from "vitest";
import { BatchedCounterStore, LIBRARY_UPSERT_NAME } from "../src/rate-limit/batched-store.js";
import { RateLimits } from "../src/rate-limit/limiter.js";
import { LIMITS, limitsFor } from "../src/rate-limit/policy.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount, buildKey } from "./helpers/factories.js";

const t = useTestApp();

async function exhaust(rule: (typeof LIMITS)[keyof typeof LIMITS], subject: string, count: number) {
  // Counters live in Postgres: another process (here another RateLimits) sees the same numbers.
  const other = new RateLimits(t.ctx.pool);
  for (let i = 0; i < count; i += 1) await other.consume([{ rule, subject }]).catch(() => {});
}

/** The id of the account's (only) API key. */
async function keyIdOf(accountId: number): Promise<number> {
  const key = await t.ctx.db
    .selectFrom("api_keys")
    .select("id")
    .where("account_id", "=", accountId)
    .executeTakeFirstOrThrow();
  return key.id;
}

describe("rate limits", () => {
  it("counts every keyed request per key and refuses past 600 per minute", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const first = await t.request().get("/api/v1/me").set(auth).expect(200);
    expect(first.headers["x-ratelimit-remaining"]).toBe("599");
    const keyId = await keyIdOf(accountId);
    await exhaust(LIMITS.general, `k${keyId}`, 599);
    const refused = await t.request().get("/api/v1/me").set(auth).expect(429);
    expect(refused.body).toEqual({
      error: "Rate limit exceeded",
      message: expect.stringContaining("600"),
      retryAfter: expect.any(Number),
    });
    expect(refused.body.retryAfter).toBeGreaterThan(0);
    expect(refused.body.retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers["retry-after"]).toBe(String(refused.body.retryAfter));
    expect(refused.headers["x-ratelimit-limit"]).toBe("600");
    expect(refused.headers["x-ratelimit-remaining"]).toBe("0");

    // The limit is per key: another key of the same account still works.
    const second = await buildKey(t.ctx.db, accountId);
    await t.request().get("/api/v1/me").set(second.auth).expect(200);
  });

  it("refuses before anything runs: a refused PATCH changes nothing", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const keyId = await keyIdOf(accountId);
    await exhaust(LIMITS.general, `k${keyId}`, 600);
    await t.request().patch("/api/v1/me").set(auth).send({ firstName: "Changed" }).expect(429);
    const account = await t.ctx.db
      .selectFrom("accounts")
      .select("first_name")
      .where("id", "=", accountId)
      .executeTakeFirstOrThrow();
    expect(account.first_name).toBeNull();
  });

  it("answers 429 first when the request is refused and also invalid (the count is waited for before any answer)", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const keyId = await keyIdOf(accountId);
    // Not refused yet: the invalid input gets its 400, with the count's headers.
    const invalid = await t.request().get("/api/v1/leads").query({ limit: "0" }).set(auth).expect(400);
    expect(invalid.headers["x-ratelimit-limit"]).toBeDefined();
    await exhaust(LIMITS.general, `k${keyId}`, 600);
    const refused = await t.request().get("/api/v1/leads").query({ limit: "0" }).set(auth).expect(429);
    expect(refused.body.error).toBe("Rate limit exceeded");
    expect(refused.headers["x-ratelimit-remaining"]).toBe("0");
    const malformed = await t
      .request()
      .patch("/api/v1/me")
      .set(auth)
      .set("Content-Type", "application/json")
      .send("{not json")
      .expect(429);
    expect(malformed.headers["retry-after"]).toBeDefined();
  });

  it("applies the most specific limit of each operation", () => {
    expect(limitsFor("getProfile", true)).toEqual([LIMITS.general]);
    expect(limitsFor("exportLeads", true)).toEqual([LIMITS.general, LIMITS.export]);
    expect(limitsFor("reExportLeadExportHistory", true)).toEqual([LIMITS.general, LIMITS.export]);
    expect(limitsFor("suggestCategories", true)).toEqual([LIMITS.general, LIMITS.ai]);
    // Polling keyword generation counts only toward the general limit (openapi.yaml, getKeywordStatus).
    expect(limitsFor("getKeywordStatus", true)).toEqual([LIMITS.general]);
    expect(limitsFor("getIntegration", true)).toEqual([LIMITS.general, LIMITS.integration]);
    expect(limitsFor("connectIntegration", true)).toEqual([LIMITS.general, LIMITS.connect]);
    expect(limitsFor("getJob", true)).toEqual([LIMITS.general]);
    expect(limitsFor("purchase", false)).toEqual([LIMITS.purchase]);
    expect(limitsFor("claimKey", false)).toEqual([LIMITS.claimKey]);
    expect(limitsFor("getHealth", false)).toEqual([]);
    expect(limitsFor("integrationOAuthCallback", false)).toEqual([]);
  });

  it("reports the most specific exceeded limit when several are counted", async () => {
    const limits = new RateLimits(t.ctx.pool);
    const subject = `k-test-${Date.now()}`;
    for (let i = 0; i < 5; i += 1)
      await limits.consume([
        { rule: LIMITS.general, subject },
        { rule: LIMITS.export, subject },
      ]);
    await expect(
      limits.consume([
        { rule: LIMITS.general, subject },
        { rule: LIMITS.export, subject },
      ]),
    ).rejects.toMatchObject({ state: { limit: 5, remaining: 0 } });
  });
});

describe("counter batches", () => {
  it("never deadlock when two processes count the same keys in opposite orders", async () => {
    // Two stores stand for two API processes; each batch upserts 2,000 counters in one statement.
    const stores = [new BatchedCounterStore(t.ctx.pool), new BatchedCounterStore(t.ctx.pool)];
    const keys = Array.from({ length: 2_000 }, (_, i) => `deadlock-test-${i}`);
    const upsert = (store: BatchedCounterStore, key: string) =>
      store.query({ name: LIBRARY_UPSERT_NAME, text: "", values: [key, 1, Date.now() + 60_000, Date.now()] });
    for (let round = 0; round < 10; round += 1) {
      await Promise.all([
        ...keys.map((key) => upsert(stores[0]!, key)),
        ...[...keys].reverse().map((key) => upsert(stores[1]!, key)),
      ]);
    }
    const { rows } = await t.ctx.pool.query<{ points: number }>(
      "select points from rate_limits where key like 'deadlock-test-%'",
    );
    expect(rows.map((r) => r.points)).toEqual(keys.map(() => 20));
  });
});
