import pg from "pg";
import { describe, expect, it } from "vitest";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLead, buildLeads, markReceived, uniqueWord } from "./helpers/leads-factories.js";

const t = useTestApp();

type Auth = { Authorization: string };

async function creditsOf(auth: Auth): Promise<number> {
  const res = await t.request().get("/api/v1/me").set(auth).expect(200);
  return res.body.data.totalCreditsRemaining as number;
}

async function chargedTenths(accountId: number): Promise<number> {
  const row = await t.ctx.db
    .selectFrom("credit_ledger")
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>("amount_tenths"), eb.lit(0)).as("sum"))
    .where("account_id", "=", accountId)
    .where("kind", "=", "charge")
    .executeTakeFirstOrThrow();
  return 0 - Number(row.sum);
}

async function historyOf(accountId: number) {
  return t.ctx.db
    .selectFrom("lead_export_history")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("lead_id")
    .execute();
}

/** Each received lead's stored snapshot, as GET /lead-export-history gives it, by lead id. */
async function snapshotsOf(auth: Auth): Promise<Map<number, Record<string, unknown>>> {
  const res = await t
    .request()
    .get("/api/v1/lead-export-history")
    .query({ limit: 200 })
    .set(auth)
    .expect(200);
  const entries = res.body.data as { leadId: number; leadSnapshot: Record<string, unknown> }[];
  return new Map(entries.map((e) => [e.leadId, e.leadSnapshot]));
}

function search(auth: Auth, query: Record<string, string | number>) {
  return t
    .request()
    .get("/api/v1/leads")
    .query({ sortBy: "id", sortOrder: "asc", ...query })
    .set(auth);
}

const ids = (res: { body: { data: { leads: { id: number }[] } } }) => res.body.data.leads.map((l) => l.id);

describe("GET /leads charging", () => {
  it("charges 1 credit per new lead and records each in the lead export history (method api, snapshot)", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db, { monthlyCredits: 100 });
    const a = uniqueWord();
    const leadIds = await buildLeads(t.ctx.db, 3, (i) => ({
      company_name: `${a} ${i}`,
      registered_url: `https://${a}${i}.com`,
      phone: "(512) 555-0142",
      phone_secondary: i === 0 ? "(512) 555-0143" : null,
      email: `hello${i}@${a}.com`,
      street: `${i} Congress Ave`,
      last_updated: new Date("2026-03-01T10:00:00Z"),
    }));
    const before = new Date();
    const res = await search(auth, { positiveKeywords: a }).expect(200);
    expect(res.headers["x-credits-capped"]).toBeUndefined();
    expect(res.body.data).toMatchObject({
      pagination: { page: 1, limit: 100, total: 3, pages: 1 },
      databaseType: "other",
      creditsUsed: 3,
      creditsRemaining: 97,
    });
    expect(ids(res)).toEqual(leadIds);
    const lead = res.body.data.leads[0];
    expect(lead).toMatchObject({
      id: leadIds[0],
      databaseType: "other",
      companyName: `${a} 0`,
      website: `https://${a}0.com`,
      email: `hello0@${a}.com`,
      phone: "(512) 555-0142",
      phoneTotal: 2,
      address: "0 Congress Ave",
      street: "0 Congress Ave",
      lastUpdated: "2026-03-01T10:00:00.000Z",
    });
    expect(await creditsOf(auth)).toBe(97);
    expect(await chargedTenths(accountId)).toBe(30);

    const history = await historyOf(accountId);
    expect(history.map((h) => h.lead_id)).toEqual(leadIds);
    for (const h of history) {
      expect(h.export_method).toBe("api");
      expect(h.database_type).toBe("other");
      expect(h.exported_at.getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);
      expect(h.lead_last_updated?.toISOString()).toBe("2026-03-01T10:00:00.000Z");
    }
    expect((await snapshotsOf(auth)).get(leadIds[0]!)).toMatchObject({
      wId: leadIds[0],
      wCompanyName: `${a} 0`,
      wPhonePrimary: "(512) 555-0142",
      wPhoneSecondary: "(512) 555-0143",
      wEmailPrimary: `hello0@${a}.com`,
      wWebsite: `https://${a}0.com`,
      wLastUpdated: "2026-03-01T10:00:00.000Z",
    });
  });

  it("the sticky rule: leads the account already received are free, and their history entry is refreshed", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db, { monthlyCredits: 100 });
    const a = uniqueWord();
    const [old, fresh] = await buildLeads(t.ctx.db, 2, (i) => ({ company_name: `${a} ${i}` }));
    await markReceived(t.ctx.db, accountId, [old!], "dashboard");

    const first = await search(auth, { positiveKeywords: a }).expect(200);
    expect(ids(first)).toEqual([old, fresh]);
    expect(first.body.data).toMatchObject({ creditsUsed: 1, creditsRemaining: 99 });
    let history = await historyOf(accountId);
    expect(history.map((h) => [h.lead_id, h.export_method])).toEqual([
      [old, "api"],
      [fresh, "api"],
    ]);
    expect((await snapshotsOf(auth)).get(old!)).toMatchObject({ wCompanyName: `${a} 0` });
    const firstExport = history[1]!.exported_at.getTime();

    // Second identical search: everything already received, nothing charged, one entry per lead.
    await t.ctx.db
      .updateTable("leads")
      .set({ company_name: `${a} 1 renamed` })
      .where("id", "=", fresh!)
      .execute();
    const second = await search(auth, { positiveKeywords: a }).expect(200);
    expect(ids(second)).toEqual([old, fresh]);
    expect(second.body.data).toMatchObject({ creditsUsed: 0, creditsRemaining: 99 });
    expect(await chargedTenths(accountId)).toBe(10);
    history = await historyOf(accountId);
    expect(history).toHaveLength(2);
    expect(history[1]!.exported_at.getTime()).toBeGreaterThanOrEqual(firstExport);
    expect((await snapshotsOf(auth)).get(fresh!)).toMatchObject({ wCompanyName: `${a} 1 renamed` });
  });

  it("another account's history does not make leads free, and is never touched (account isolation)", async () => {
    const one = await buildAccount(t.ctx.db, { monthlyCredits: 10 });
    const two = await buildAccount(t.ctx.db, { monthlyCredits: 10 });
    const a = uniqueWord();
    const leadIds = await buildLeads(t.ctx.db, 2, (i) => ({ company_name: `${a} ${i}` }));
    await markReceived(t.ctx.db, two.accountId, leadIds);
    const res = await search(one.auth, { positiveKeywords: a }).expect(200);
    expect(res.body.data.creditsUsed).toBe(2);
    expect((await historyOf(one.accountId)).map((h) => h.lead_id)).toEqual(leadIds);
    const untouched = await historyOf(two.accountId);
    expect(untouched.map((h) => [h.lead_id, h.export_method])).toEqual(
      leadIds.map((id) => [id, "dashboard"]),
    );
    expect(await creditsOf(two.auth)).toBe(10);
  });

  it("caps the results at the spendable balance: new leads beyond it are dropped, X-Credits-Capped: true", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db, { monthlyCredits: 2, permanentCredits: 1 });
    const a = uniqueWord();
    const leadIds = await buildLeads(t.ctx.db, 6, (i) => ({ company_name: `${a} ${i}` }));
    // Lead 4 was received before: always included, free.
    await markReceived(t.ctx.db, accountId, [leadIds[4]!]);
    const res = await search(auth, { positiveKeywords: a }).expect(200);
    expect(res.headers["x-credits-capped"]).toBe("true");
    // The first 3 new leads in sort order (what 3 credits pay for) and the received one.
    expect(ids(res)).toEqual([leadIds[0], leadIds[1], leadIds[2], leadIds[4]]);
    expect(res.body.data).toMatchObject({
      pagination: { page: 1, limit: 100, total: 4, pages: 1 },
      creditsUsed: 3,
      creditsRemaining: 0,
    });
    expect(await chargedTenths(accountId)).toBe(30);
    const ledger = await t.ctx.db
      .selectFrom("credit_ledger")
      .select(["bucket", "amount_tenths"])
      .where("account_id", "=", accountId)
      .where("kind", "=", "charge")
      .orderBy("bucket")
      .execute();
    expect(ledger).toEqual([
      { bucket: "monthly", amount_tenths: -20 },
      { bucket: "permanent", amount_tenths: -10 },
    ]);

    // With no credit left: only received leads, still 200 and capped.
    const again = await search(auth, { positiveKeywords: a }).expect(200);
    expect(again.headers["x-credits-capped"]).toBe("true");
    expect(ids(again)).toEqual([leadIds[0], leadIds[1], leadIds[2], leadIds[4]]);
    expect(again.body.data).toMatchObject({ creditsUsed: 0, creditsRemaining: 0 });
  });

  it("caps across pages: total counts the capped list and later pages are cut from it", async () => {
    const { auth } = await buildAccount(t.ctx.db, { monthlyCredits: 3 });
    const a = uniqueWord();
    const leadIds = await buildLeads(t.ctx.db, 5, (i) => ({ company_name: `${a} ${i}` }));
    const page1 = await search(auth, { positiveKeywords: a, limit: 2 }).expect(200);
    expect(ids(page1)).toEqual(leadIds.slice(0, 2));
    expect(page1.headers["x-credits-capped"]).toBe("true");
    expect(page1.body.data).toMatchObject({
      pagination: { total: 3, pages: 2 },
      creditsUsed: 2,
      creditsRemaining: 1,
    });
    // Leads 0-1 are now owned (free); one credit pays for lead 2.
    const page2 = await search(auth, { positiveKeywords: a, limit: 2, page: 2 }).expect(200);
    expect(ids(page2)).toEqual([leadIds[2]]);
    expect(page2.body.data).toMatchObject({
      pagination: { total: 3, pages: 2 },
      creditsUsed: 1,
      creditsRemaining: 0,
    });
  });

  it("a balance that covers every match is not capped", async () => {
    const { auth } = await buildAccount(t.ctx.db, { monthlyCredits: 2 });
    const a = uniqueWord();
    await buildLeads(t.ctx.db, 2, (i) => ({ company_name: `${a} ${i}` }));
    const res = await search(auth, { positiveKeywords: a }).expect(200);
    expect(res.headers["x-credits-capped"]).toBeUndefined();
    expect(res.body.data).toMatchObject({ creditsUsed: 2, creditsRemaining: 0 });
  });
});

describe("GET /leads cost controls: maxCredits, maxResults, excludePurchased", () => {
  /** Six leads in id order, of which the account already received leads 1 and 3. */
  async function sixLeads(monthlyCredits: number) {
    const account = await buildAccount(t.ctx.db, { monthlyCredits });
    const a = uniqueWord();
    const leadIds = await buildLeads(t.ctx.db, 6, (i) => ({ company_name: `${a} ${i}` }));
    await markReceived(t.ctx.db, account.accountId, [leadIds[1]!, leadIds[3]!]);
    return { ...account, a, leadIds };
  }

  it("maxCredits: new leads first, cut to maxCredits; received leads fill the page free; echoed", async () => {
    const { accountId, auth, a, leadIds } = await sixLeads(100);
    const before = await historyOf(accountId);
    const res = await search(auth, { positiveKeywords: a, maxCredits: 2 }).expect(200);
    // maxCredits (not the balance) cut the new leads: no X-Credits-Capped.
    expect(res.headers["x-credits-capped"]).toBeUndefined();
    expect(ids(res)).toEqual([leadIds[0], leadIds[2], leadIds[1], leadIds[3]]);
    expect(res.body.data).toMatchObject({
      pagination: { page: 1, limit: 100, total: 4, pages: 1 },
      creditsUsed: 2,
      creditsRemaining: 98,
      maxCredits: 2,
    });
    expect(res.body.data.maxResults).toBeUndefined();
    expect(await chargedTenths(accountId)).toBe(20);
    expect(await creditsOf(auth)).toBe(98);
    // Every returned lead is recorded: the two new ones added, the two received ones refreshed.
    const after = await historyOf(accountId);
    expect(after.map((e) => e.lead_id)).toEqual([leadIds[0], leadIds[1], leadIds[2], leadIds[3]]);
    for (const e of after.filter((e) => e.lead_id === leadIds[1] || e.lead_id === leadIds[3])) {
      expect(e.export_method).toBe("api");
      expect(e.exported_at.getTime()).toBeGreaterThan(before[0]!.exported_at.getTime());
    }
  });

  it("maxCredits=0: only leads the account already has, free", async () => {
    const { accountId, auth, a, leadIds } = await sixLeads(100);
    const res = await search(auth, { positiveKeywords: a, maxCredits: 0 }).expect(200);
    expect(res.headers["x-credits-capped"]).toBeUndefined();
    expect(ids(res)).toEqual([leadIds[1], leadIds[3]]);
    expect(res.body.data).toMatchObject({ pagination: { total: 2 }, creditsUsed: 0, maxCredits: 0 });
    expect(await chargedTenths(accountId)).toBe(0);
    expect((await historyOf(accountId)).map((e) => e.lead_id)).toEqual([leadIds[1], leadIds[3]]);
  });

  it("maxResults: the page, new leads first, is cut to maxResults; only what is returned is charged and recorded", async () => {
    const { accountId, auth, a, leadIds } = await sixLeads(100);
    const res = await search(auth, { positiveKeywords: a, maxResults: 3 }).expect(200);
    expect(ids(res)).toEqual([leadIds[0], leadIds[2], leadIds[4]]);
    expect(res.body.data).toMatchObject({
      pagination: { page: 1, limit: 100, total: 6, pages: 1 },
      creditsUsed: 3,
      creditsRemaining: 97,
      maxResults: 3,
    });
    expect(res.body.data.maxCredits).toBeUndefined();
    expect(await chargedTenths(accountId)).toBe(30);
    // The received leads 1 and 3 were not returned: their entries are untouched.
    const history = await historyOf(accountId);
    expect(history.map((e) => e.lead_id)).toEqual([
      leadIds[0],
      leadIds[1],
      leadIds[2],
      leadIds[3],
      leadIds[4],
    ]);
    for (const e of history.filter((e) => e.lead_id === leadIds[1] || e.lead_id === leadIds[3])) {
      expect(e.export_method).toBe("dashboard");
    }
  });

  it("maxResults and maxCredits together: new leads up to maxCredits, received ones after, then the cut", async () => {
    const { accountId, auth, a, leadIds } = await sixLeads(100);
    const res = await search(auth, { positiveKeywords: a, maxCredits: 1, maxResults: 2 }).expect(200);
    expect(ids(res)).toEqual([leadIds[0], leadIds[1]]);
    expect(res.body.data).toMatchObject({
      pagination: { total: 3 },
      creditsUsed: 1,
      maxCredits: 1,
      maxResults: 2,
    });
    expect(await chargedTenths(accountId)).toBe(10);
  });

  it("pages: each page is cut from the list (new leads first); maxResults trims that page only", async () => {
    const { accountId, auth, a, leadIds } = await sixLeads(100);
    // The list: new leads 0, 2, 4 (maxCredits 3), then received 1, 3. Page 2 of 2: [4, 1].
    const page2 = await search(auth, { positiveKeywords: a, maxCredits: 3, limit: 2, page: 2 }).expect(200);
    expect(ids(page2)).toEqual([leadIds[4], leadIds[1]]);
    expect(page2.body.data).toMatchObject({
      pagination: { page: 2, limit: 2, total: 5, pages: 3 },
      creditsUsed: 1,
    });
    // Lead 4 is now received: the list is new 0, 2, 5, then received 1, 3, 4. Page 2 cut to 1: [5].
    const trimmed = await search(auth, {
      positiveKeywords: a,
      maxCredits: 3,
      limit: 2,
      page: 2,
      maxResults: 1,
    });
    expect(trimmed.status).toBe(200);
    expect(ids(trimmed)).toEqual([leadIds[5]]);
    expect(trimmed.body.data).toMatchObject({ pagination: { total: 6, pages: 3 }, creditsUsed: 1 });
    expect(await chargedTenths(accountId)).toBe(20);
  });

  it("X-Credits-Capped only when the balance, not maxCredits, cut new leads", async () => {
    const { auth, a, leadIds } = await sixLeads(2);
    // maxCredits 3 would allow 3 new leads; the balance pays for 2.
    const capped = await search(auth, { positiveKeywords: a, maxCredits: 3, maxResults: 10 }).expect(200);
    expect(capped.headers["x-credits-capped"]).toBe("true");
    expect(ids(capped)).toEqual([leadIds[0], leadIds[2], leadIds[1], leadIds[3]]);
    expect(capped.body.data).toMatchObject({ creditsUsed: 2, creditsRemaining: 0, pagination: { total: 4 } });
    // maxCredits 0 asks for no new lead: not capped by the balance (now 0).
    const free = await search(auth, { positiveKeywords: a, maxCredits: 0 }).expect(200);
    expect(free.headers["x-credits-capped"]).toBeUndefined();
    // Without maxCredits the empty balance cuts every new lead: capped.
    const broke = await search(auth, { positiveKeywords: a, maxResults: 10 }).expect(200);
    expect(broke.headers["x-credits-capped"]).toBe("true");
    expect(ids(broke)).toEqual([leadIds[0], leadIds[1], leadIds[2], leadIds[3]]);
    expect(broke.body.data).toMatchObject({ creditsUsed: 0, creditsRemaining: 0 });
  });

  it("without maxCredits and maxResults new and received leads stay mixed in sort order", async () => {
    const { auth, a, leadIds } = await sixLeads(100);
    const res = await search(auth, { positiveKeywords: a }).expect(200);
    expect(ids(res)).toEqual(leadIds);
    expect(res.body.data).toMatchObject({ creditsUsed: 4 });
    expect(res.body.data.maxCredits).toBeUndefined();
  });

  it("excludePurchased=true: received leads are left out before paging, on GET /leads too", async () => {
    const { accountId, auth, a, leadIds } = await sixLeads(100);
    const res = await search(auth, { positiveKeywords: a, excludePurchased: "true", limit: 3 }).expect(200);
    expect(ids(res)).toEqual([leadIds[0], leadIds[2], leadIds[4]]);
    expect(res.body.data).toMatchObject({ pagination: { total: 4, pages: 2 }, creditsUsed: 3 });
    const capped = await search(auth, {
      positiveKeywords: a,
      excludePurchased: "true",
      maxCredits: 1,
    }).expect(200);
    expect(ids(capped)).toEqual([leadIds[5]]);
    expect(capped.body.data).toMatchObject({ pagination: { total: 1 }, creditsUsed: 1 });
    expect(await chargedTenths(accountId)).toBe(40);
    // false is the default: every match.
    const all = await search(auth, { positiveKeywords: a, excludePurchased: "false" }).expect(200);
    expect(ids(all)).toEqual(leadIds);
    expect(all.body.data.creditsUsed).toBe(0);
  });

  it("another account's received leads are new for this one: ordered and charged as new", async () => {
    const one = await buildAccount(t.ctx.db, { monthlyCredits: 10 });
    const two = await buildAccount(t.ctx.db, { monthlyCredits: 10 });
    const a = uniqueWord();
    const leadIds = await buildLeads(t.ctx.db, 3, (i) => ({ company_name: `${a} ${i}` }));
    await markReceived(t.ctx.db, two.accountId, [leadIds[0]!]);
    await markReceived(t.ctx.db, one.accountId, [leadIds[2]!]);
    const res = await search(one.auth, { positiveKeywords: a, maxCredits: 1 }).expect(200);
    expect(ids(res)).toEqual([leadIds[0], leadIds[2]]);
    expect(res.body.data).toMatchObject({ creditsUsed: 1, creditsRemaining: 9 });
    const mine = await search(two.auth, { positiveKeywords: a, maxCredits: 0 }).expect(200);
    expect(ids(mine)).toEqual([leadIds[0]]);
    expect(await chargedTenths(two.accountId)).toBe(0);
  });
});

describe("GET /leads under concurrency", () => {
  it("two concurrent searches never spend more than the balance: the loser gets 402", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db, { monthlyCredits: 5 });
    const a = uniqueWord();
    const b = uniqueWord();
    await buildLeads(t.ctx.db, 5, (i) => ({ company_name: `${a} ${i}` }));
    await buildLeads(t.ctx.db, 5, (i) => ({ company_name: `${b} ${i}` }));
    // Both read the balance (5) before either charges: the account's credit lock is held while
    // they search, so both wait on it and charge one after the other.
    const locker = new pg.Client({ connectionString: t.database.url });
    await locker.connect();
    await locker.query("begin");
    await locker.query("select id from accounts where id = $1 for update", [accountId]);
    const requests = [
      search(auth, { positiveKeywords: a }).then((r) => r),
      search(auth, { positiveKeywords: b }).then((r) => r),
    ];
    await waitForLockWaiters(accountId, 2);
    await locker.query("commit");
    await locker.end();
    const results = await Promise.all(requests);
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 402]);
    const loser = results.find((r) => r.status === 402)!;
    expect(loser.body.error).toBe("insufficient_credits");
    const winner = results.find((r) => r.status === 200)!;
    expect(winner.body.data.creditsUsed).toBe(5);
    expect(await chargedTenths(accountId)).toBe(50);
    expect(await historyOf(accountId)).toHaveLength(5);
  });

  it("two concurrent identical searches charge each lead once", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db, { monthlyCredits: 10 });
    const a = uniqueWord();
    await buildLeads(t.ctx.db, 4, (i) => ({ company_name: `${a} ${i}` }));
    const results = await Promise.all([1, 2, 3].map(() => search(auth, { positiveKeywords: a })));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(results.map((r) => r.body.data.creditsUsed).sort()).toEqual([0, 0, 4]);
    expect(await chargedTenths(accountId)).toBe(40);
    expect(await historyOf(accountId)).toHaveLength(4);
  });

  it("answers 429 charge_in_progress (Retry-After 30) when the charge lock stays taken; nothing charged", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db, { monthlyCredits: 5 });
    const a = uniqueWord();
    await buildLead(t.ctx.db, { company_name: a });
    const locker = new pg.Client({ connectionString: t.database.url });
    await locker.connect();
    await locker.query("begin");
    await locker.query("select id from accounts where id = $1 for update", [accountId]);
    try {
      const res = await search(auth, { positiveKeywords: a }).expect(429);
      expect(res.body.error).toBe("charge_in_progress");
      expect(res.headers["retry-after"]).toBe("30");
    } finally {
      await locker.query("rollback");
      await locker.end();
    }
    expect(await chargedTenths(accountId)).toBe(0);
    expect(await historyOf(accountId)).toEqual([]);
    // The query slot was given back.
    const held = await t.ctx.db
      .selectFrom("lead_query_slots")
      .select("slot")
      .where("account_id", "=", accountId)
      .where("token", "is not", null)
      .execute();
    expect(held).toEqual([]);
  });
});

/** Waits until `count` sessions wait for a lock held on the account's row. */
async function waitForLockWaiters(accountId: number, count: number): Promise<void> {
  void accountId;
  for (let i = 0; i < 200; i += 1) {
    const { rows } = await t.ctx.pool.query<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
    );
    if ((rows[0]?.n ?? 0) >= count) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`fewer than ${count} requests waited for the account lock`);
}
