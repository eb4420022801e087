import type pg from "pg";
import { RateLimiterPostgres, RateLimiterRes } from "rate-limiter-flexible";
import { describe, expect, it } from "vitest";
import { findAccountWithBalance } from "../src/accounts/repository.js";
import { grantCredits } from "../src/credits/ledger.js";
import { createDatabase } from "../src/db/database.js";
import { BatchedCounterStore, LIBRARY_UPSERT_NAME } from "../src/rate-limit/batched-store.js";
import { RateLimitExceeded, RateLimits } from "../src/rate-limit/limiter.js";
import { LIMITS } from "../src/rate-limit/policy.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";

const t = useTestApp();

const squash = (text: string) => text.replace(/\s+/g, " ").trim();

/** A pool that counts the statements sent through it. */
function countingPool(pool: pg.Pool): { pool: pg.Pool; statements: () => number } {
  let statements = 0;
  const counting = {
    query: (query: unknown) => {
      statements += 1;
      return pool.query(query as pg.QueryConfig);
    },
  };
  return { pool: counting as unknown as pg.Pool, statements: () => statements };
}

describe("rate-limit counts sent together", () => {
  it("mirrors the upsert the installed rate-limiter-flexible sends", async () => {
    const sent: { name?: string; text: string; values?: unknown[] }[] = [];
    const limiter = new RateLimiterPostgres({
      storeClient: {
        query: async (q: { name?: string; text: string; values?: unknown[] }) => {
          sent.push(q);
          return { rows: [{ points: 1, expire: Date.now() + 60_000 }] };
        },
      },
      storeType: "pool",
      tableName: "rate_limits",
      tableCreated: true,
      keyPrefix: "probe",
      points: 10,
      duration: 60,
      clearExpiredByTimeout: false,
    });
    await limiter.consume("x", 1);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.name).toBe(LIBRARY_UPSERT_NAME);
    // BatchedCounterStore's statement is this one for many keys; a library upgrade that changes
    // it must be looked at.
    expect(squash(sent[0]?.text ?? "")).toBe(
      squash(`INSERT INTO "rate_limits" VALUES ($1, $2, $3)
        ON CONFLICT(key) DO UPDATE SET
          points = CASE WHEN ("rate_limits".expire <= $4 OR 1=0) THEN $2 ELSE "rate_limits".points + ($2) END,
          expire = CASE WHEN "rate_limits".expire <= $4 THEN $3 ELSE "rate_limits".expire END
        RETURNING points, expire;`),
    );
    expect(sent[0]?.values).toEqual(["probe:x", 1, expect.any(Number), expect.any(Number)]);
  });

  it("counts every one of many concurrent requests exactly, in fewer round trips", async () => {
    const { pool, statements } = countingPool(t.ctx.pool);
    const limiter = new RateLimiterPostgres({
      storeClient: new BatchedCounterStore(pool),
      storeType: "pool",
      tableName: "rate_limits",
      tableCreated: true,
      keyPrefix: "batch",
      points: 100,
      duration: 60,
      clearExpiredByTimeout: false,
    });
    const subjects = Array.from({ length: 20 }, (_, i) => `s${i}`);
    // 20 subjects x 6 requests, all at once, then 110 more on one subject (past its 100).
    const first = await Promise.all(
      subjects.flatMap((s) => Array.from({ length: 6 }, () => limiter.consume(s))),
    );
    expect(first.every((res) => res instanceof RateLimiterRes)).toBe(true);
    expect(statements()).toBeLessThan(120);
    const rows = await t.ctx.db
      .selectFrom("rate_limits")
      .select(["key", "points"])
      .where("key", "like", "batch:s%")
      .execute();
    expect(rows).toHaveLength(20);
    expect(rows.every((row) => row.points === 6)).toBe(true);

    const outcomes = await Promise.allSettled(Array.from({ length: 110 }, () => limiter.consume("s0")));
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(94);
    expect(outcomes.filter((o) => o.status === "rejected")).toHaveLength(16);
    const remaining = outcomes
      .filter((o): o is PromiseFulfilledResult<RateLimiterRes> => o.status === "fulfilled")
      .map((o) => o.value.remainingPoints)
      .sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 94 }, (_, i) => i));
  });

  it("refuses past the limit through RateLimits, also when the requests arrive together", async () => {
    const limits = new RateLimits(t.ctx.pool);
    const rule = { ...LIMITS.export, name: "batch_export" };
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, () => limits.consume([{ rule, subject: "k-batch" }])),
    );
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(5);
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected");
    expect(refused).toHaveLength(3);
    expect(refused.every((o) => o.reason instanceof RateLimitExceeded)).toBe(true);
  });
});

describe("account reads sent together", () => {
  it("gives every concurrent reader its own account, fresh, in fewer round trips", async () => {
    const { db, pool } = createDatabase(t.database.url, 4);
    try {
      let acquired = 0;
      pool.on("acquire", () => (acquired += 1));
      const accounts = await Promise.all(
        Array.from({ length: 12 }, (_, i) => buildAccount(t.ctx.db, { permanentCredits: i + 1 })),
      );
      const reads = await Promise.all(accounts.map((a) => findAccountWithBalance(db, a.accountId)));
      expect(reads.map((r) => r?.account.id)).toEqual(accounts.map((a) => a.accountId));
      expect(reads.map((r) => r?.balance.permanentTenths)).toEqual(accounts.map((_, i) => (i + 1) * 10));
      expect(acquired).toBeLessThan(12);

      // The same account twice, and an unknown one, in one go.
      const [a, b, none] = await Promise.all([
        findAccountWithBalance(db, accounts[0]!.accountId),
        findAccountWithBalance(db, accounts[0]!.accountId),
        findAccountWithBalance(db, 2_000_000_000),
      ]);
      expect(a?.account.id).toBe(accounts[0]!.accountId);
      expect(b?.account.id).toBe(accounts[0]!.accountId);
      expect(none).toBeUndefined();

      // A grant committed before a read is always in it.
      await grantCredits(t.ctx.db, {
        accountId: accounts[0]!.accountId,
        bucket: "permanent",
        tenths: 55,
        reason: "admin_grant",
      });
      const after = await findAccountWithBalance(db, accounts[0]!.accountId);
      expect(after?.balance.permanentTenths).toBe(65);
    } finally {
      await db.destroy();
    }
  });

  it("reads inside a transaction on that transaction (its own uncommitted writes)", async () => {
    const { accountId } = await buildAccount(t.ctx.db, { permanentCredits: 1 });
    await t.ctx.db
      .transaction()
      .execute(async (trx) => {
        await grantCredits(trx, { accountId, bucket: "permanent", tenths: 20, reason: "admin_grant" });
        const inside = await findAccountWithBalance(trx, accountId);
        expect(inside?.balance.permanentTenths).toBe(30);
        throw new Error("roll back");
      })
      .catch((err: unknown) => {
        if ((err as Error).message !== "roll back") throw err;
      });
    const outside = await findAccountWithBalance(t.ctx.db, accountId);
    expect(outside?.balance.permanentTenths).toBe(10);
  });
});

describe("request pipeline", () => {
  it("refuses a multipart body on a JSON endpoint with 400 and changes nothing", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t.request().patch("/api/v1/me").set(auth).field("firstName", "Multi").expect(400);
    expect(res.body.error).toBe("validation_error");
    const me = await t.request().get("/api/v1/me").set(auth).expect(200);
    expect(me.body.data.firstName).toBeNull();
  });
});
