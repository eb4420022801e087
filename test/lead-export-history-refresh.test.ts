import { parse } from "csv-parse/sync";
import type { Runner } from "graphile-worker";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importLeadRecords } from "../src/leads/import/importer.js";
import { LEAD_VERSION_LOCK, recordDeliveredLeads } from "../src/leads/versions.js";
import { useJobRunner, useTestApp } from "./helpers/app.js";
import { startDeliveryRunner } from "./helpers/delivery-runner.js";
import { buildAccount, buildKey } from "./helpers/factories.js";
import { uniqueWord } from "./helpers/leads-factories.js";
import { buildHistoryEntry, expectKeyAndPlanRequired } from "./helpers/lead-records-factories.js";
import { createWebhook, startReceiver } from "./helpers/webhook-receiver.js";

const t = useTestApp();
useJobRunner(t);
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let runner: Runner;

beforeAll(async () => {
  receiver = await startReceiver();
  runner = await startDeliveryRunner(t.ctx);
});
afterAll(async () => {
  await runner?.stop();
  await receiver?.close();
});

type Auth = { Authorization: string };
const BASE = "/api/v1/lead-export-history";

function record(id: string, overrides: Record<string, unknown> = {}) {
  return {
    id,
    companyName: `Company ${id}`,
    registeredUrl: `https://${id}.example`,
    phone: "(512) 555-0142",
    email: `info@${id}.example`,
    city: "Austin",
    state: "TX",
    zip: "78701",
    lastUpdated: "2026-10-01T00:00:00Z",
    ...overrides,
  };
}

/**
 * An account that received `count` imported leads through the API (entries naming the versions
 * delivered). Answers the account, the leads' external ids, lead ids and tracking ids (same order).
 */
async function accountWithLeads(count: number) {
  const account = await buildAccount(t.ctx.db);
  const external = Array.from({ length: count }, () => uniqueWord("rf"));
  await importLeadRecords(
    t.ctx.db,
    external.map((id) => record(id)),
  );
  const { rows } = await sql<{ id: number; external_id: string }>`
    select id, external_id from leads where external_id = any(${external})`.execute(t.ctx.db);
  const leadIds = external.map((e) => rows.find((r) => r.external_id === e)!.id);
  await t.ctx.db.transaction().execute((trx) =>
    recordDeliveredLeads(trx, {
      accountId: account.accountId,
      method: "api",
      exportedAt: new Date(),
      leadIds,
    }),
  );
  const entries = await t.ctx.db
    .selectFrom("lead_export_history")
    .select(["id", "lead_id"])
    .where("account_id", "=", account.accountId)
    .execute();
  const trackingIds = leadIds.map((l) => entries.find((e) => e.lead_id === l)!.id);
  return { ...account, external, leadIds, trackingIds };
}

/** The account's entries as the database holds them, by tracking id. */
async function entryRows(accountId: number) {
  const rows = await t.ctx.db
    .selectFrom("lead_export_history")
    .select(["id", "lead_version", "last_changed_fields", "lead_last_updated", "exported_at"])
    .where("account_id", "=", accountId)
    .orderBy("id")
    .execute();
  return rows;
}

async function ledgerRows(accountId: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from credit_ledger where account_id = ${accountId}`.execute(t.ctx.db);
  return rows[0]!.n;
}

async function balance(auth: Auth): Promise<number> {
  const res = await t.request().get("/api/v1/me").set(auth).expect(200);
  return res.body.data.totalCreditsRemaining as number;
}

const post = (path: string, auth: Auth, body: unknown) =>
  t
    .request()
    .post(`${BASE}${path}`)
    .set(auth)
    .send(body as object);

type RefreshItem = {
  id: number;
  leadId: number | null;
  changed: boolean;
  changedFields: string[];
  refreshed: boolean;
  lead: Record<string, unknown> | null;
};

async function refresh(auth: Auth, body: unknown): Promise<{ results: RefreshItem[]; refreshed: number }> {
  const res = await post("/refresh", auth, body).expect(200);
  expect(res.headers["x-svc-job-id"]).toBeDefined();
  return res.body.data;
}

function csvRows(text: string): Record<string, string>[] {
  return parse(text, { columns: true, skip_empty_lines: true }) as Record<string, string>[];
}

/** Waits until the outbox is empty and no delivery of the integration is pending. */
async function settled(integrationId: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { rows } = await sql<{ n: number }>`
      select (select count(*) from event_outbox)::int
        + (select count(*) from integration_deliveries
           where integration_id = ${integrationId} and status not in ('success', 'failed'))::int as n`.execute(
      t.ctx.db,
    );
    if (rows[0]?.n === 0) return;
    if (Date.now() > deadline) throw new Error("events not delivered");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("POST /lead-export-history/refresh", () => {
  it("brings snapshots up to date after a real import and reports each entry's changes", async () => {
    const a = await accountWithLeads(3);
    const other = await buildAccount(t.ctx.db);
    const theirs = await buildHistoryEntry(t.ctx.db, other.accountId);
    const before = await entryRows(a.accountId);
    const credits = await balance(a.auth);
    const ledger = await ledgerRows(a.accountId);
    // Lead 0 gets a new phone and date, lead 1 stays as it was, lead 2 leaves the database.
    await importLeadRecords(t.ctx.db, [
      record(a.external[0]!, { phone: "(512) 555-0199", lastUpdated: "2026-11-20T00:00:00Z" }),
      record(a.external[1]!),
    ]);
    await sql`delete from leads where id = ${a.leadIds[2]!}`.execute(t.ctx.db);

    const asked = [...a.trackingIds, 2_000_000_000, theirs.id];
    const out = await refresh(a.auth, { trackingIds: asked, filters: { dateFrom: "not checked" } });
    expect(out.refreshed).toBe(2);
    expect(out.results.map((r) => r.id)).toEqual(asked);
    const [changed, same, gone, unknown, foreign] = out.results;
    expect(changed).toMatchObject({ leadId: a.leadIds[0], changed: true, refreshed: true });
    expect(changed!.changedFields.sort()).toEqual(
      ["wBuyingSignalType", "wLastBuyingSignal", "wLastUpdated", "wPhonePrimary"].sort(),
    );
    expect(changed!.lead).toMatchObject({ wId: a.leadIds[0], wPhonePrimary: "(512) 555-0199" });
    expect(same).toMatchObject({ leadId: a.leadIds[1], changed: false, changedFields: [], refreshed: true });
    expect(same!.lead).toMatchObject({ wCompanyName: `Company ${a.external[1]}` });
    expect(gone).toEqual({
      id: a.trackingIds[2],
      leadId: a.leadIds[2],
      changed: false,
      changedFields: [],
      refreshed: false,
      lead: null,
    });
    for (const r of [unknown, foreign]) {
      expect(r).toMatchObject({
        leadId: null,
        changed: false,
        changedFields: [],
        refreshed: false,
        lead: null,
      });
    }

    // The snapshot is the fresh data now; export time and channel stay; the changed fields are kept.
    const list = await t.request().get(BASE).set(a.auth).expect(200);
    const entry = (list.body.data as Record<string, unknown>[]).find((e) => e.id === a.trackingIds[0])!;
    expect(entry).toMatchObject({
      leadLastUpdated: "2026-11-20T00:00:00.000Z",
      leadSnapshot: { wPhonePrimary: "(512) 555-0199" },
      exportMethod: "api",
    });
    expect((entry.lastChangedFields as string[]).sort()).toEqual(changed!.changedFields);
    const after = await entryRows(a.accountId);
    expect(after.map((e) => e.exported_at)).toEqual(before.map((e) => e.exported_at));
    expect(after[2]).toEqual(before[2]); // the entry of the deleted lead is left as it was

    // Refreshed again: nothing newer, but the changed fields are kept until refresh-and-export.
    const again = await refresh(a.auth, { trackingIds: [a.trackingIds[0]] });
    expect(again.results[0]).toMatchObject({ changed: false, refreshed: true });
    expect(again.results[0]!.changedFields.sort()).toEqual(changed!.changedFields);
    // Free, and the other account's entry is untouched.
    expect(await balance(a.auth)).toBe(credits);
    expect(await ledgerRows(a.accountId)).toBe(ledger);
    expect((await entryRows(other.accountId))[0]!.lead_version).toBeNull();
  });

  it("sends exactly one lead.updated per lead with newer data, none for blacklisted leads", async () => {
    const a = await accountWithLeads(3);
    await importLeadRecords(t.ctx.db, [
      record(a.external[0]!, { email: "new@zero.example" }),
      record(a.external[2]!, { city: "Dallas" }),
    ]);
    // Subscribed after the import, so only the refresh can send events.
    const hook = await createWebhook(t, receiver, a.auth, ["lead.updated"]);
    await t
      .request()
      .post("/api/v1/export-blacklist")
      .set(a.auth)
      .send({ entries: [{ entryType: "domain", value: `${a.external[2]}.example` }] })
      .expect(201);
    await refresh(a.auth, { trackingIds: a.trackingIds });
    const got = await receiver.waitForAt(hook.path, 1);
    await settled(hook.id);
    expect(receiver.at(hook.path)).toHaveLength(1);
    expect(got[0]!.event).toMatchObject({
      type: "lead.updated",
      data: { id: a.leadIds[0], email: "new@zero.example", source: "api" },
    });
    // Nothing newer on a second refresh: nothing sent.
    await refresh(a.auth, { trackingIds: a.trackingIds });
    await settled(hook.id);
    expect(receiver.at(hook.path)).toHaveLength(1);
  });

  it("selects by filters, and refuses invalid filters, none, or more than 5,000 matches with 400 bad_request", async () => {
    const a = await accountWithLeads(2);
    await sql`update lead_export_history set export_method = 'email_schedule' where id = ${a.trackingIds[1]!}`.execute(
      t.ctx.db,
    );
    const out = await refresh(a.auth, {
      filters: { exportMethod: "email_schedule", databaseType: "anything" },
    });
    expect(out.results.map((r) => r.id)).toEqual([a.trackingIds[1]]);

    const bad = async (body: unknown, pattern: RegExp) => {
      const res = await post("/refresh", a.auth, body).expect(400);
      expect(res.body.error).toBe("bad_request");
      expect(res.body.message).toMatch(pattern);
    };
    await bad({ filters: { exportMethod: "crm_push" } }, /match no/);
    await bad({ filters: { dateFrom: "2026-02-30", databaseType: 5 } }, /dateFrom.*databaseType/);
    const b = await buildKey(t.ctx.db, a.accountId);
    const badB = async (body: unknown, pattern: RegExp) => {
      const res = await post("/refresh", b.auth, body).expect(400);
      expect(res.body.error).toBe("bad_request");
      expect(res.body.message).toMatch(pattern);
    };
    await badB({}, /trackingIds or filters/);
    await badB({ filters: { dateTo: "0000-01-01" } }, /dateTo/);
    // 5,001 entries (leads not in the database: entries outlive their leads).
    await sql`insert into lead_export_history (account_id, lead_id, exported_at, export_method)
      select ${a.accountId}, g, now(), 'dashboard' from generate_series(1900000000, 1900005000) g`.execute(
      t.ctx.db,
    );
    const c = await buildKey(t.ctx.db, a.accountId, "third");
    const res = await post("/refresh", c.auth, { filters: { exportMethod: "dashboard" } }).expect(400);
    expect(res.body).toMatchObject({ error: "bad_request", message: expect.stringMatching(/5001 entries/) });
    const tooMany = await post("/refresh", c.auth, {
      trackingIds: Array.from({ length: 5_001 }, (_, i) => i + 1),
    }).expect(400);
    expect(tooMany.body.error).toBe("validation_error");
    await post("/refresh", c.auth, { trackingIds: ["x"] }).expect(400);
    // Nothing was changed by the refused requests.
    expect((await entryRows(a.accountId)).filter((e) => e.last_changed_fields !== null)).toEqual([]);
  });
});

describe("changed fields", () => {
  it("are the snapshot keys whose values differ, for every kind of field, as the snapshots show them", async () => {
    const full = {
      phoneSecondary: "(512) 555-0100",
      stars: 4.5,
      reviewCount: 12,
      employees: 8,
      foundedDate: "2001-05-04",
      isChain: false,
      websiteSchemaTypes: ["LocalBusiness"],
      founders: ["Ann Lee"],
      socialProfiles: { facebook: "https://facebook.com/a" },
      crawledUrl: "https://crawled.example",
      description: "Pipes.",
      latitude: 30.25,
      redirect: false,
      registrationDate: "2019-02-03",
      timeScraped: "2026-10-01T00:00:00Z",
      websiteEmailSecurity: ["spf"],
      founderEmails: ["ann@example.com"],
      openPositions: 2,
      duns: "123456789",
      platform: "Wix",
    };
    const a = await accountWithLeads(2);
    await importLeadRecords(t.ctx.db, [record(a.external[0]!, full), record(a.external[1]!, full)]);
    // Brought up to date with no changed fields kept (refresh-and-export clears them).
    await post("/refresh-and-export", a.auth, { trackingIds: a.trackingIds }).expect(200);
    const snapshots = async () => {
      const res = await t.request().get(`${BASE}?limit=200`).set(a.auth).expect(200);
      const rows = res.body.data as { id: number; leadSnapshot: Record<string, unknown> }[];
      return a.trackingIds.map((id) => rows.find((r) => r.id === id)!.leadSnapshot);
    };
    const before = await snapshots();
    await importLeadRecords(t.ctx.db, [
      // Lead 0: a change of every kind (a derived field through its source, list and map members,
      // numbers, dates, booleans, a removed value).
      record(a.external[0]!, {
        ...full,
        registeredUrl: null,
        phoneSecondary: null,
        stars: 4.6,
        reviewCount: 13,
        foundedDate: "2001-05-05",
        isChain: true,
        websiteSchemaTypes: ["LocalBusiness", "Plumber"],
        founders: ["Ann Lee", "Bo Park"],
        socialProfiles: { facebook: "https://facebook.com/b" },
        lastUpdated: "2026-11-20T00:00:00.123Z",
        latitude: 30.26,
        redirect: true,
        registrationDate: "2019-02-04",
        timeScraped: "2026-10-01T00:00:00.001Z",
        websiteEmailSecurity: ["spf", "dmarc"],
        founderEmails: ["bo@example.com"],
        openPositions: null,
        duns: "987654321",
        platform: null,
      }),
      // Lead 1: the same values written again, and a date a microsecond later (the API shows ms).
      record(a.external[1]!, { ...full, lastUpdated: "2026-10-01T00:00:00.0000001Z" }),
    ]);
    const out = await refresh(a.auth, { trackingIds: a.trackingIds });
    const after = await snapshots();
    const expected = (i: number) =>
      Object.keys(after[i]!).filter((k) => JSON.stringify(after[i]![k]) !== JSON.stringify(before[i]![k]));
    expect(out.results[0]!.changedFields).toEqual(expected(0));
    expect(out.results[0]!.changedFields).toEqual(
      expect.arrayContaining([
        "wWebsite",
        "wRegisteredUrl",
        "wPhoneSecondary",
        "wPhoneTotal",
        "wStars",
        "wIsChain",
        "wGeoLat",
        "wRedirectYn",
        "wProfileDate",
        "wTimeScraped",
        "wEmailSecurity",
        "wFounderEmail",
        "wOpenPositions",
        "wDuns",
        "wPlatform",
      ]),
    );
    expect(out.results[1]!.changedFields).toEqual(expected(1));
  });
});

describe("entries holding a copied older snapshot", () => {
  it("compare it with the lead: refresh reports its changed fields, refresh-and-export sends the newer data", async () => {
    const a = await accountWithLeads(2);
    // Older entries: a copy of the data delivered (one phone different from the lead's), no version.
    for (const id of a.trackingIds) {
      await sql`update lead_export_history set lead_version = null, last_changed_fields = null,
        lead_snapshot = ${JSON.stringify({ wCompanyName: "Old name", wPhonePrimary: "(512) 555-0142" })}::jsonb
        where id = ${id}`.execute(t.ctx.db);
    }
    const hook = await createWebhook(t, receiver, a.auth, ["lead.updated"]);
    const out = await refresh(a.auth, { trackingIds: [a.trackingIds[0]] });
    expect(out.results[0]!.changedFields).toContain("wCompanyName");
    expect(out.results[0]!.changedFields).not.toContain("wPhonePrimary");
    await post("/refresh-and-export", a.auth, { trackingIds: [a.trackingIds[1]] }).expect(200);
    const got = await receiver.waitForAt(hook.path, 2);
    expect(got.map((d) => (d.event.data as { id: number }).id).sort()).toEqual([...a.leadIds].sort());
    // Both entries now name the current version; the copies are gone.
    const rows = await t.ctx.db
      .selectFrom("lead_export_history")
      .select(["lead_snapshot", "lead_version"])
      .where("account_id", "=", a.accountId)
      .execute();
    expect(rows.every((r) => r.lead_snapshot === null && r.lead_version !== null)).toBe(true);
  });
});

describe("entries holding a copied snapshot with the new fields", () => {
  it("re-export them under the real service's sourceField keys; keys the copy lacks are empty", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const copied = await buildHistoryEntry(t.ctx.db, accountId, {
      snapshot: {
        wCompanyName: "Copied",
        wGeoLat: 30.5,
        wRedirectYn: true,
        wFounderEmail: ["ann@example.com", "bo@example.com"],
        wProfileDate: "2019-02-03",
        wTimeScraped: "2026-10-01T12:00:00.000Z",
        // An older copy in camelCase keys is read too.
        openPositions: 3,
      },
    });
    const bare = await buildHistoryEntry(t.ctx.db, accountId, { snapshot: { wCompanyName: "Bare" } });
    const format = await t
      .request()
      .post("/api/v1/export-formats")
      .set(auth)
      .send({
        name: "Real keys",
        fileType: "csv",
        fieldMappings: [
          ["wCompanyName", "Company"],
          ["wGeoLat", "Latitude"],
          ["wRedirectYn", "Redirect"],
          ["wFounderEmail", "Founder Emails"],
          ["wProfileDate", "Registration Date"],
          ["wTimeScraped", "Time Scraped"],
          ["wOpenPositions", "Jobs"],
          ["wEmailSecurity", "Security"],
        ].map(([sourceField, exportName]) => ({ sourceField, exportName, type: "field" })),
      })
      .expect(201);
    const res = await post("/re-export", auth, {
      trackingIds: [copied.id, bare.id],
      formatId: format.body.data.id,
    }).expect(200);
    expect(csvRows(res.text)).toEqual([
      {
        Company: "Copied",
        Latitude: "30.5",
        Redirect: "true",
        "Founder Emails": "ann@example.com; bo@example.com",
        "Registration Date": "2019-02-03",
        "Time Scraped": "2026-10-01T12:00:00.000Z",
        Jobs: "3",
        Security: "",
      },
      {
        Company: "Bare",
        Latitude: "",
        Redirect: "",
        "Founder Emails": "",
        "Registration Date": "",
        "Time Scraped": "",
        Jobs: "",
        Security: "",
      },
    ]);
  });
});

describe("POST /lead-export-history/re-export", () => {
  it("writes the stored snapshots (live data only without one), refreshes and sends nothing, charges nothing", async () => {
    const a = await accountWithLeads(2);
    const hook = await createWebhook(t, receiver, a.auth, ["lead.updated", "export.completed"]);
    // A newer phone in the database that the account has not refreshed.
    await importLeadRecords(t.ctx.db, [record(a.external[0]!, { phone: "(512) 555-0111" })]);
    await settled(hook.id);
    const liveUpdates = receiver.at(hook.path).length;
    const copied = await buildHistoryEntry(t.ctx.db, a.accountId, {
      snapshot: { wId: 1, wCompanyName: "Copied Name", wPhonePrimary: "(512) 555-0000", wCity: "Waco" },
    });
    const live = await buildHistoryEntry(t.ctx.db, a.accountId, { snapshot: null });
    const before = await entryRows(a.accountId);
    const credits = await balance(a.auth);
    const ledger = await ledgerRows(a.accountId);

    const ids = [a.trackingIds[0], copied.id, live.id, a.trackingIds[1], 2_000_000_000];
    const res = await post("/re-export", a.auth, { trackingIds: ids, formatId: 999_999 }).expect(200);
    expect(res.headers["content-type"]).toMatch(/^text\/csv/);
    expect(res.headers["content-disposition"]).toMatch(/leads-main-\d{4}-\d{2}-\d{2}\.csv/);
    const rows = csvRows(res.text);
    expect(rows.map((r) => r.companyName)).toEqual([
      `Company ${a.external[0]}`,
      "Copied Name",
      expect.stringMatching(/^Acme Plumbing/),
      `Company ${a.external[1]}`,
    ]);
    expect(rows[0]).toMatchObject({ phone: "(512) 555-0142", id: String(a.leadIds[0]) });
    expect(rows[1]).toMatchObject({ phone: "(512) 555-0000", city: "Waco", id: String(copied.leadId) });

    expect(await entryRows(a.accountId)).toEqual(before);
    await settled(hook.id);
    expect(receiver.at(hook.path)).toHaveLength(liveUpdates);
    expect(await balance(a.auth)).toBe(credits);
    expect(await ledgerRows(a.accountId)).toBe(ledger);
    // The file is in the export history like any export.
    const files = await t.request().get("/api/v1/export-history").set(a.auth).expect(200);
    expect(files.body.data).toEqual([expect.objectContaining({ leadCount: 4, fileType: "csv" })]);
  });

  it("uses a saved format of the account", async () => {
    const a = await accountWithLeads(2);
    const format = await t
      .request()
      .post("/api/v1/export-formats")
      .set(a.auth)
      .send({
        name: "JSON names",
        fileType: "json",
        fieldMappings: [
          { sourceField: "companyName", exportName: "Company", type: "field" },
          { sourceField: "wPhonePrimary", exportName: "Phone", type: "field" },
        ],
      })
      .expect(201);
    const res = await post("/re-export", a.auth, {
      trackingIds: a.trackingIds,
      formatId: format.body.data.id,
    }).expect(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    const body = (res.body instanceof Buffer ? JSON.parse(res.body.toString()) : res.body) as unknown;
    expect(body).toEqual([
      { Company: `Company ${a.external[0]}`, Phone: "(512) 555-0142" },
      { Company: `Company ${a.external[1]}`, Phone: "(512) 555-0142" },
    ]);
  });

  it("gives 404 when no id matches an entry with lead data, 400 for entries that cannot be combined", async () => {
    const a = await accountWithLeads(2);
    const other = await accountWithLeads(1);
    const empty = await buildHistoryEntry(t.ctx.db, a.accountId, { snapshot: null });
    await sql`delete from leads where id = ${empty.leadId}`.execute(t.ctx.db);
    for (const trackingIds of [[2_000_000_000], other.trackingIds, [empty.id]]) {
      const res = await post("/re-export", a.auth, { trackingIds }).expect(404);
      expect(res.body.error).toBe("not_found");
    }
    await sql`update lead_export_history set database_type = 'home_improvement' where id = ${a.trackingIds[1]!}`.execute(
      t.ctx.db,
    );
    const res = await post("/re-export", a.auth, { trackingIds: a.trackingIds }).expect(400);
    expect(res.body).toMatchObject({
      error: "bad_request",
      message: expect.stringMatching(/cannot be combined/),
    });
    const b = await buildKey(t.ctx.db, a.accountId);
    await post("/re-export", b.auth, { trackingIds: [] }).expect(400);
    await post("/re-export", b.auth, { formatId: 1 }).expect(400);
  });
});

describe("POST /lead-export-history/refresh-and-export", () => {
  it("refreshes, sends lead.updated, writes refreshed-export-* and clears the changed fields", async () => {
    const a = await accountWithLeads(2);
    await importLeadRecords(t.ctx.db, [
      record(a.external[1]!, { zip: "78702", lastUpdated: "2026-11-21T00:00:00Z" }),
    ]);
    const hook = await createWebhook(t, receiver, a.auth, ["lead.updated"]);
    const credits = await balance(a.auth);
    const ledger = await ledgerRows(a.accountId);
    // A refresh first: the changed fields are kept.
    await refresh(a.auth, { trackingIds: a.trackingIds });
    await settled(hook.id);
    expect(receiver.at(hook.path)).toHaveLength(1);
    expect((await entryRows(a.accountId))[1]!.last_changed_fields).not.toBeNull();
    await importLeadRecords(t.ctx.db, [record(a.external[0]!, { phone: "(512) 555-0123" })]);

    const res = await post("/refresh-and-export", a.auth, { filters: { exportMethod: "api" } }).expect(200);
    expect(res.headers["content-disposition"]).toMatch(/filename="?refreshed-export-\d{4}-\d{2}-\d{2}\.csv/);
    const rows = csvRows(res.text);
    expect(rows.map((r) => [r.id, r.phone, r.zip]).sort()).toEqual(
      [
        [String(a.leadIds[0]), "(512) 555-0123", "78701"],
        [String(a.leadIds[1]), "(512) 555-0142", "78702"],
      ].sort(),
    );
    const entries = await entryRows(a.accountId);
    expect(entries.map((e) => e.last_changed_fields)).toEqual([null, null]);
    // The import's live update, then the refresh-and-export (newer than the snapshot): both for lead 0.
    const got = await receiver.waitForAt(hook.path, 3);
    await settled(hook.id);
    expect(receiver.at(hook.path)).toHaveLength(3);
    for (const d of got.slice(1)) {
      expect(d.event).toMatchObject({ data: { id: a.leadIds[0], phone: "(512) 555-0123" } });
    }
    expect(await balance(a.auth)).toBe(credits);
    expect(await ledgerRows(a.accountId)).toBe(ledger);
  });

  it("checks everything first: a 400 or 404 leaves every entry unchanged", async () => {
    const a = await accountWithLeads(2);
    await sql`update lead_export_history set last_changed_fields = array['wCity'] where account_id = ${a.accountId}`.execute(
      t.ctx.db,
    );
    await importLeadRecords(t.ctx.db, [record(a.external[0]!, { phone: "(512) 555-0155" })]);
    const hook = await createWebhook(t, receiver, a.auth, ["lead.updated"]);
    await sql`update lead_export_history set database_type = 'home_improvement' where id = ${a.trackingIds[1]!}`.execute(
      t.ctx.db,
    );
    const before = await entryRows(a.accountId);
    const res = await post("/refresh-and-export", a.auth, { trackingIds: a.trackingIds }).expect(400);
    expect(res.body.error).toBe("bad_request");
    const missing = await post("/refresh-and-export", a.auth, { trackingIds: [2_000_000_000] }).expect(404);
    expect(missing.body.error).toBe("not_found");
    const bad = await post("/refresh-and-export", a.auth, { filters: { dateFrom: 20260101 } }).expect(400);
    expect(bad.body.error).toBe("bad_request");
    expect(await entryRows(a.accountId)).toEqual(before);
    await settled(hook.id);
    expect(receiver.at(hook.path)).toEqual([]);
  });
});

describe("the job protocol", () => {
  it("answers 202 with Prefer: respond-async, and an Idempotency-Key never runs the refresh again", async () => {
    const a = await accountWithLeads(1);
    await importLeadRecords(t.ctx.db, [record(a.external[0]!, { email: "again@one.example" })]);
    const body = { trackingIds: a.trackingIds };
    const accepted = await post("/refresh", a.auth, body)
      .set("Prefer", "respond-async")
      .set("Idempotency-Key", "refresh-key-1")
      .expect(202);
    expect(accepted.body).toMatchObject({ status: "running", kind: "lead_history_refresh" });
    const done = await t
      .request()
      .get(accepted.body.statusUrl as string)
      .set(a.auth)
      .set("Prefer", "wait=10")
      .expect(200);
    expect(done.body.data.results[0]).toMatchObject({ changed: false, refreshed: true });
    expect(done.body.data.results[0].changedFields).toContain("wEmailPrimary");
    // The same key: the stored answer, not a second refresh (which would find nothing changed).
    const replay = await post("/refresh", a.auth, body).set("Idempotency-Key", "refresh-key-1").expect(200);
    expect(replay.body).toEqual(done.body);
    expect(replay.headers["x-svc-job-id"]).toBe(accepted.body.jobId);
    const reused = await post("/refresh", a.auth, { trackingIds: [1] })
      .set("Idempotency-Key", "refresh-key-1")
      .expect(409);
    expect(reused.body.error).toBe("idempotency_key_reused");
  });
});

describe("limits", () => {
  it("runs at most 2 of each kind at once per account: a 3rd gives 429 job_capacity_busy", async () => {
    const a = await accountWithLeads(1);
    // Refreshes wait for the lead version lock (held here as a lead change would hold it).
    const holder = await t.ctx.pool.connect();
    try {
      await holder.query("begin");
      await holder.query("select pg_advisory_xact_lock($1)", [LEAD_VERSION_LOCK]);
      // Different requests (`filters` is ignored beside `trackingIds`): an identical one would join.
      const body = (i: number) => ({ trackingIds: a.trackingIds, filters: { databaseType: `other-${i}` } });
      const running = [];
      for (let i = 0; i < 2; i += 1) {
        running.push(
          (await post("/refresh", a.auth, body(i)).set("Prefer", "respond-async").expect(202)).body,
        );
      }
      const busy = await post("/refresh", a.auth, body(2)).expect(429);
      expect(busy.body.error).toBe("job_capacity_busy");
      expect(busy.headers["retry-after"]).toBeDefined();
      // Another kind has a capacity of its own.
      const other = await post("/refresh-and-export", a.auth, body(3))
        .set("Prefer", "respond-async")
        .expect(202);
      await holder.query("commit");
      for (const job of [...running, other.body]) {
        await t
          .request()
          .get(job.statusUrl as string)
          .set(a.auth)
          .set("Prefer", "wait=10")
          .expect(200);
      }
    } finally {
      await holder.query("rollback").catch(() => undefined);
      holder.release();
    }
  });

  it("count against the export limit of 5 per minute per key, shared with exports", async () => {
    const a = await accountWithLeads(1);
    const body = { trackingIds: a.trackingIds };
    await t
      .request()
      .post("/api/v1/leads/export")
      .set(a.auth)
      .send({ positiveKeywords: ["zzznothing"] })
      .expect(200);
    await post("/refresh", a.auth, body).expect(200);
    await post("/re-export", a.auth, body).expect(200);
    await post("/refresh-and-export", a.auth, body).expect(200);
    const last = await post("/refresh", a.auth, body).expect(200);
    expect(last.headers["x-ratelimit-remaining"]).toBe("0");
    const limited = await post("/re-export", a.auth, body).expect(429);
    expect(limited.body.error).toBe("Rate limit exceeded");
    expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
    // Another key of the same account has its own export limit.
    const other = await buildKey(t.ctx.db, a.accountId);
    await post("/refresh", other.auth, body).expect(200);
  });
});

describe("keys and plans", () => {
  it("need a valid, unrevoked key of an account with a paid plan", async () => {
    await expectKeyAndPlanRequired(t, [
      { method: "post", path: `${BASE}/refresh`, body: { trackingIds: [1] } },
      { method: "post", path: `${BASE}/re-export`, body: { trackingIds: [1] } },
      { method: "post", path: `${BASE}/refresh-and-export`, body: { trackingIds: [1] } },
    ]);
  });
});
