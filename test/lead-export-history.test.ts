import { describe, expect, it } from "vitest";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { buildHistoryEntry, buildLead, expectKeyAndPlanRequired } from "./helpers/lead-records-factories.js";

const t = useTestApp();

type Auth = { Authorization: string };
const at = (iso: string) => new Date(iso);

async function list(auth: Auth, query: Record<string, string | number> = {}) {
  const res = await t.request().get("/api/v1/lead-export-history").query(query).set(auth).expect(200);
  return res.body as {
    data: Record<string, unknown>[];
    totalCount: number;
    limit: number;
    offset: number;
  };
}

async function ids(auth: Auth, query: Record<string, string | number> = {}) {
  const res = await t.request().get("/api/v1/lead-export-history/ids").query(query).set(auth).expect(200);
  return res.body as { data: number[]; totalCount: number };
}

/** An account with entries on known days and channels (UTC). */
async function accountWithHistory() {
  const account = await buildAccount(t.ctx.db);
  const e = {
    nov9: await buildHistoryEntry(t.ctx.db, account.accountId, {
      exportedAt: at("2026-11-09T12:00:00Z"),
      exportMethod: "dashboard",
    }),
    nov10late: await buildHistoryEntry(t.ctx.db, account.accountId, {
      exportedAt: at("2026-11-10T23:59:59.999Z"),
      exportMethod: "api",
    }),
    nov11start: await buildHistoryEntry(t.ctx.db, account.accountId, {
      exportedAt: at("2026-11-11T00:00:00Z"),
      exportMethod: "email_schedule",
    }),
    nov12: await buildHistoryEntry(t.ctx.db, account.accountId, {
      exportedAt: at("2026-11-12T08:00:00Z"),
      exportMethod: "api",
    }),
  };
  return { ...account, e };
}

describe("GET /lead-export-history", () => {
  it("lists every field of the entries, newest export first", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const { leadId } = await buildLead(t.ctx.db, { company_name: "Live Name LLC" });
    const older = await buildHistoryEntry(t.ctx.db, accountId, {
      leadId,
      exportedAt: at("2026-11-01T09:30:00Z"),
      exportMethod: "crm_push",
      leadLastUpdated: at("2026-10-30T00:00:00Z"),
      snapshot: { wId: leadId, wCompanyName: "Old Name", wPhonePrimary: "(512) 555-0100" },
      lastChangedFields: ["wCompanyName"],
    });
    const newer = await buildHistoryEntry(t.ctx.db, accountId, { exportedAt: at("2026-11-02T09:30:00Z") });
    const page = await list(auth);
    expect(page).toMatchObject({ totalCount: 2, limit: 50, offset: 0 });
    expect(page.data.map((entry) => entry.id)).toEqual([newer.id, older.id]);
    expect(page.data[1]).toEqual({
      id: older.id,
      userId: accountId,
      leadId,
      databaseType: "other",
      exportedAt: "2026-11-01T09:30:00.000Z",
      exportMethod: "crm_push",
      leadLastUpdated: "2026-10-30T00:00:00.000Z",
      leadSnapshot: { wId: leadId, wCompanyName: "Old Name", wPhonePrimary: "(512) 555-0100" },
      lead: { wId: leadId, wCompanyName: "Old Name", wPhonePrimary: "(512) 555-0100" },
      lastChangedFields: ["wCompanyName"],
    });
    expect(page.data[0]).toMatchObject({ leadLastUpdated: null, lastChangedFields: null });
  });

  it("gives the live lead data as `lead` for an entry without a snapshot", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const { leadId } = await buildLead(t.ctx.db, {
      company_name: "Live Plumbing",
      registered_url: null,
      crawled_url: "https://live-plumbing.com",
      phone: "(512) 555-0199",
      state: "TX",
    });
    await buildHistoryEntry(t.ctx.db, accountId, { leadId, snapshot: null });
    const [entry] = (await list(auth)).data;
    expect(entry?.leadSnapshot).toBeNull();
    expect(entry?.lead).toMatchObject({
      wId: leadId,
      wCompanyName: "Live Plumbing",
      wWebsite: "https://live-plumbing.com",
      wCrawledUrl: "https://live-plumbing.com",
      wPhonePrimary: "(512) 555-0199",
      wState: "TX",
      wLastUpdated: "2026-11-01T10:00:00.000Z",
    });
  });

  it("pages with limit (default 50) and offset, with the total of all matches", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const created: number[] = [];
    for (let i = 0; i < 55; i += 1) {
      const exportedAt = new Date(Date.UTC(2026, 9, 1, 0, i));
      created.push((await buildHistoryEntry(t.ctx.db, accountId, { exportedAt })).id);
    }
    const newestFirst = [...created].reverse();
    const first = await list(auth);
    expect(first.data).toHaveLength(50);
    expect(first.totalCount).toBe(55);
    expect(first.data.map((e) => e.id)).toEqual(newestFirst.slice(0, 50));
    const second = await list(auth, { limit: 20, offset: 50 });
    expect(second).toMatchObject({ totalCount: 55, limit: 20, offset: 50 });
    expect(second.data.map((e) => e.id)).toEqual(newestFirst.slice(50));
    const beyond = await list(auth, { offset: 500 });
    expect(beyond).toMatchObject({ data: [], totalCount: 55, offset: 500 });
    expect((await list(auth, { limit: 200 })).data).toHaveLength(55);
    expect((await list(auth, { limit: 1, offset: 3 })).data.map((e) => e.id)).toEqual([newestFirst[3]]);
  });

  it("orders entries exported at the same time by tracking id, newest first", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const exportedAt = at("2026-11-05T00:00:00Z");
    const a = await buildHistoryEntry(t.ctx.db, accountId, { exportedAt });
    const b = await buildHistoryEntry(t.ctx.db, accountId, { exportedAt });
    expect((await list(auth)).data.map((e) => e.id)).toEqual([b.id, a.id]);
  });

  it("filters by days (UTC, dateTo counts its whole day) and by export method", async () => {
    const { auth, e } = await accountWithHistory();
    const idsOf = async (query: Record<string, string>) => (await list(auth, query)).data.map((x) => x.id);
    expect(await idsOf({ dateTo: "2026-11-10" })).toEqual([e.nov10late.id, e.nov9.id]);
    expect(await idsOf({ dateFrom: "2026-11-11" })).toEqual([e.nov12.id, e.nov11start.id]);
    expect(await idsOf({ dateFrom: "2026-11-10", dateTo: "2026-11-11" })).toEqual([
      e.nov11start.id,
      e.nov10late.id,
    ]);
    expect(await idsOf({ dateFrom: "2026-11-11", dateTo: "2026-11-11" })).toEqual([e.nov11start.id]);
    expect(await idsOf({ dateFrom: "2026-11-12", dateTo: "2026-11-09" })).toEqual([]);
    expect(await idsOf({ exportMethod: "api" })).toEqual([e.nov12.id, e.nov10late.id]);
    expect(await idsOf({ exportMethod: "enrichment" })).toEqual([]);
    expect(await idsOf({ exportMethod: "api", dateTo: "2026-11-11" })).toEqual([e.nov10late.id]);
    const filtered = await list(auth, { exportMethod: "api", limit: 1 });
    expect(filtered).toMatchObject({ totalCount: 2, limit: 1 });
  });

  it("resolves any databaseType to the Main database", async () => {
    const { auth } = await accountWithHistory();
    for (const databaseType of ["other", "home_improvement", "anything"]) {
      expect((await list(auth, { databaseType })).totalCount).toBe(4);
    }
  });

  it("accepts the extreme dates of years 1 and 9999", async () => {
    const { auth } = await accountWithHistory();
    expect((await list(auth, { dateFrom: "0001-01-01", dateTo: "9999-12-31" })).totalCount).toBe(4);
    expect((await list(auth, { dateTo: "0001-01-01" })).totalCount).toBe(0);
  });

  it.each([
    ["limit 0", { limit: 0 }, "limit"],
    ["limit 201", { limit: 201 }, "limit"],
    ["a limit that is not a number", { limit: "ten" }, "limit"],
    ["a fractional limit", { limit: "1.5" }, "limit"],
    ["a negative offset", { offset: -1 }, "offset"],
    ["an offset that is not a number", { offset: "x" }, "offset"],
    ["year 0000", { dateFrom: "0000-01-01" }, "dateFrom"],
    ["a month 13", { dateTo: "2026-13-01" }, "dateTo"],
    ["February 30", { dateFrom: "2026-02-30" }, "dateFrom"],
    ["February 29 of a common year", { dateTo: "2026-02-29" }, "dateTo"],
    ["a date without dashes", { dateFrom: "20261101" }, "dateFrom"],
    ["a date-time", { dateTo: "2026-11-01T00:00:00Z" }, "dateTo"],
    ["a five-digit year", { dateTo: "10000-01-01" }, "dateTo"],
    ["an unknown export method", { exportMethod: "fax" }, "exportMethod"],
  ])("refuses %s with 400 validation_error", async (_label, query, name) => {
    const { auth } = await accountWithHistory();
    const res = await t.request().get("/api/v1/lead-export-history").query(query).set(auth).expect(400);
    expect(res.body.error).toBe("validation_error");
    expect(res.body.details).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: expect.arrayContaining([name]) })]),
    );
  });

  it("never shows another account's entries", async () => {
    const owner = await accountWithHistory();
    const other = await buildAccount(t.ctx.db);
    // The other account received one of the same leads.
    const shared = await buildHistoryEntry(t.ctx.db, other.accountId, { leadId: owner.e.nov9.leadId });
    expect((await list(other.auth)).data.map((e) => e.id)).toEqual([shared.id]);
    expect((await list(other.auth)).totalCount).toBe(1);
    expect((await list(owner.auth)).data.map((e) => e.id)).not.toContain(shared.id);
    expect((await list(owner.auth)).data.every((e) => e.userId === owner.accountId)).toBe(true);
  });
});

describe("GET /lead-export-history/ids", () => {
  it("lists every matching tracking id, newest export first, without pagination", async () => {
    const { accountId, auth, e } = await accountWithHistory();
    for (let i = 0; i < 60; i += 1) {
      await buildHistoryEntry(t.ctx.db, accountId, { exportedAt: new Date(Date.UTC(2026, 0, 1, 0, i)) });
    }
    const all = await ids(auth);
    expect(all.totalCount).toBe(64);
    expect(all.data).toHaveLength(64);
    expect(all.data.slice(0, 4)).toEqual([e.nov12.id, e.nov11start.id, e.nov10late.id, e.nov9.id]);
    const listed = await list(auth, { limit: 200 });
    expect(all.data).toEqual(listed.data.map((x) => x.id));
  });

  it("applies the same filters as the list", async () => {
    const { auth, e } = await accountWithHistory();
    expect(await ids(auth, { dateTo: "2026-11-10" })).toEqual({
      data: [e.nov10late.id, e.nov9.id],
      totalCount: 2,
    });
    expect(await ids(auth, { exportMethod: "api", dateFrom: "2026-11-11" })).toEqual({
      data: [e.nov12.id],
      totalCount: 1,
    });
    expect(await ids(auth, { databaseType: "whatever" })).toMatchObject({ totalCount: 4 });
    expect(await ids(auth, { exportMethod: "crm_push" })).toEqual({ data: [], totalCount: 0 });
  });

  it.each([
    ["year 0000", { dateFrom: "0000-12-31" }],
    ["an invalid day", { dateTo: "2026-04-31" }],
    ["a date that is not a date", { dateFrom: "yesterday" }],
    ["an unknown export method", { exportMethod: "pigeon" }],
    ["pagination parameters", { limit: 10 }],
  ])("refuses %s with 400 validation_error", async (_label, query) => {
    const { auth } = await accountWithHistory();
    const res = await t.request().get("/api/v1/lead-export-history/ids").query(query).set(auth).expect(400);
    expect(res.body.error).toBe("validation_error");
  });

  it("never shows another account's ids", async () => {
    const owner = await accountWithHistory();
    const other = await buildAccount(t.ctx.db);
    expect(await ids(other.auth)).toEqual({ data: [], totalCount: 0 });
    const theirs = await buildHistoryEntry(t.ctx.db, other.accountId);
    expect(await ids(other.auth)).toEqual({ data: [theirs.id], totalCount: 1 });
    expect((await ids(owner.auth)).data).not.toContain(theirs.id);
  });
});

describe("keys and plans", () => {
  it("needs a valid, unrevoked key of an account with a paid plan", async () => {
    await expectKeyAndPlanRequired(t, [
      { method: "get", path: "/api/v1/lead-export-history" },
      { method: "get", path: "/api/v1/lead-export-history/ids" },
    ]);
  });
});
