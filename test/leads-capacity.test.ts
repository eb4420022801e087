import pg from "pg";
import { describe, expect, it } from "vitest";
import { LEAD_QUERY_CAPACITY } from "../src/leads/search/capacity.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLead, uniqueWord } from "./helpers/leads-factories.js";
import { holdLeadQuerySlots } from "./helpers/lead-query-slots.js";

const t = useTestApp();

/** The slot count once it settles: a query answers first and gives its slot back right after. */
async function settledSlotCount(accountId: number, expected: number): Promise<number> {
  let count = await slotCount(accountId);
  for (let i = 0; i < 100 && count !== expected; i += 1) {
    await new Promise((r) => setTimeout(r, 10));
    count = await slotCount(accountId);
  }
  return count;
}

/** Slots of the account held right now. */
async function slotCount(accountId: number): Promise<number> {
  const rows = await t.ctx.db
    .selectFrom("lead_query_slots")
    .select("slot")
    .where("account_id", "=", accountId)
    .where("token", "is not", null)
    .where("expires_at", ">", new Date())
    .execute();
  return rows.length;
}

describe("lead query capacity (10 concurrent lead queries per account)", () => {
  it("the 11th concurrent query of an account gets 429 lead_query_capacity_busy, Retry-After 10", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db, { monthlyCredits: 10 });
    const other = await buildAccount(t.ctx.db, { monthlyCredits: 10 });
    const a = uniqueWord();
    await buildLead(t.ctx.db, { company_name: a });
    await holdLeadQuerySlots(t.ctx.db, accountId, LEAD_QUERY_CAPACITY);
    for (const endpoint of ["/api/v1/leads", "/api/v1/leads/preview"]) {
      const res = await t.request().get(endpoint).query({ positiveKeywords: a }).set(auth).expect(429);
      expect(res.body.error).toBe("lead_query_capacity_busy");
      expect(res.headers["retry-after"]).toBe("10");
    }
    // Nothing was charged, and another account is not affected.
    const charges = await t.ctx.db
      .selectFrom("credit_ledger")
      .select("id")
      .where("account_id", "=", accountId)
      .where("kind", "=", "charge")
      .execute();
    expect(charges).toEqual([]);
    await t.request().get("/api/v1/leads").query({ positiveKeywords: a }).set(other.auth).expect(200);
    // One slot free again: the query runs and gives its slot back.
    await t.ctx.db
      .updateTable("lead_query_slots")
      .set({ token: null, expires_at: null })
      .where("account_id", "=", accountId)
      .where("slot", "=", 3)
      .execute();
    await t.request().get("/api/v1/leads/preview").query({ positiveKeywords: a }).set(auth).expect(200);
    expect(await settledSlotCount(accountId, LEAD_QUERY_CAPACITY - 1)).toBe(LEAD_QUERY_CAPACITY - 1);
  });

  it("a running query holds a slot until it ends", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db, { monthlyCredits: 10 });
    const a = uniqueWord();
    await buildLead(t.ctx.db, { company_name: a });
    // Keep one search running: it waits for the account's credit lock.
    const locker = new pg.Client({ connectionString: t.database.url });
    await locker.connect();
    await locker.query("begin");
    await locker.query("select id from accounts where id = $1 for update", [accountId]);
    const running = t
      .request()
      .get("/api/v1/leads")
      .query({ positiveKeywords: a })
      .set(auth)
      .then((r) => r);
    for (let i = 0; i < 200 && (await slotCount(accountId)) < 1; i += 1)
      await new Promise((r) => setTimeout(r, 10));
    expect(await slotCount(accountId)).toBe(1);
    await holdLeadQuerySlots(t.ctx.db, accountId, LEAD_QUERY_CAPACITY - 1);
    const busy = await t
      .request()
      .get("/api/v1/leads/preview")
      .query({ positiveKeywords: a })
      .set(auth)
      .expect(429);
    expect(busy.body.error).toBe("lead_query_capacity_busy");
    await locker.query("commit");
    await locker.end();
    expect((await running).status).toBe(200);
    expect(await settledSlotCount(accountId, LEAD_QUERY_CAPACITY - 1)).toBe(LEAD_QUERY_CAPACITY - 1);
  });

  it("slots left by a process that died expire", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const a = uniqueWord();
    await buildLead(t.ctx.db, { company_name: a });
    await holdLeadQuerySlots(t.ctx.db, accountId, LEAD_QUERY_CAPACITY, -1000);
    await t.request().get("/api/v1/leads/preview").query({ positiveKeywords: a }).set(auth).expect(200);
    expect(await settledSlotCount(accountId, 0)).toBe(0);
  });
});
