import { sql } from "kysely";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "csv-parse/sync";
import { getAccountWithBalance } from "../src/accounts/service.js";
import { spendable } from "../src/credits/spendable.js";
import { claimRun, LeaseLostError, updateLeasedRun } from "../src/enrichments/repository.js";
import { matchNextBatch } from "../src/enrichments/worker/matching.js";
import type { EnrichmentSettings } from "../src/enrichments/worker/settings.js";
import { processRunSlice, runContext, sweepStalledRuns } from "../src/enrichments/worker/task.js";
import { closePageAgent, Outbound } from "../src/outbound/index.js";
import { useTestApp, type TestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { startEnrichmentRunner } from "./helpers/jobs-factories.js";
import { expectKeyAndPlanRequired } from "./helpers/lead-records-factories.js";
import { buildLead, markReceived, uniqueWord } from "./helpers/leads-factories.js";
import {
  homePage,
  jsonLd,
  startSmallBusinessSites,
  type SmallBusinessSites,
} from "./helpers/small-business-sites.js";

const t = useTestApp();
let sites: SmallBusinessSites;

// Live fetches reach the local sites: every name resolves to 127.0.0.1, which this policy treats
// as public; `internal.*` names resolve to 127.0.0.2, which stays refused.
const outbound = new Outbound({
  allowPrivate: false,
  refuses: (ip) => ip !== "127.0.0.1",
  resolve: async (host) => (host.startsWith("internal") ? ["127.0.0.2"] : ["127.0.0.1"]),
});

beforeAll(async () => {
  sites = await startSmallBusinessSites();
});
afterAll(async () => {
  await closePageAgent(outbound);
  outbound.close();
  await sites.close();
});

type Auth = { Authorization: string };

/** A host name no other test uses. */
const newHost = () => `${uniqueWord()}.test`;

function context(t: TestApp, settings: Partial<EnrichmentSettings> = {}) {
  return runContext({
    db: t.ctx.db,
    storage: t.ctx.storage,
    outbound,
    signingSecret: t.ctx.signingSecret,
    publicBaseUrl: t.ctx.config.publicBaseUrl,
    logger: pino({ level: "silent" }),
    settings: { politenessDelayMs: 0, sliceMs: 20_000, ...settings },
  });
}

/** Processes a run slice after slice (as the queue would) until it is finished. */
async function drive(runId: number, settings: Partial<EnrichmentSettings> = {}): Promise<void> {
  const ctx = context(t, settings);
  for (let slice = 0; slice < 50; slice += 1) {
    if ((await processRunSlice(ctx, runId)) === "finished") return;
  }
  throw new Error(`run ${runId} did not finish`);
}

async function submit(auth: Auth, body: object): Promise<number> {
  const res = await t.request().post("/api/v1/enrichments").set(auth).send(body).expect(202);
  return res.body.data.id as number;
}

async function runOf(auth: Auth, id: number) {
  return (await t.request().get(`/api/v1/enrichments/${id}`).set(auth).expect(200)).body.data;
}

/** The result file of a run, through its signed link, as records keyed by column name. */
async function resultFile(auth: Auth, id: number): Promise<Record<string, string>[]> {
  const link = (await t.request().get(`/api/v1/enrichments/${id}/download`).set(auth).expect(200)).body.data;
  const path = new URL(link.url).pathname;
  const file = await t
    .request()
    .get(path)
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => done(null, Buffer.concat(chunks).toString("utf8")));
    });
  expect(file.status).toBe(200);
  return parse(file.body as string, { columns: true }) as Record<string, string>[];
}

async function chargedTenths(accountId: number): Promise<number> {
  const row = await t.ctx.db
    .selectFrom("credit_ledger")
    .select(sql<string>`coalesce(-sum(amount_tenths), 0)`.as("n"))
    .where("account_id", "=", accountId)
    .where("reason", "=", "enrichment")
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const withPhone = (name: string) =>
  homePage({ name, footer: `<p>Call <a href="tel:+15124723391">(512) 472-3391</a></p>` });
const withEmail = (name: string) =>
  homePage({ name, footer: `<p>Write to hello [at] ${name.replace(/\.test$/, "")} [dot] test</p>` });
const bare = (name: string) => homePage({ name });

describe("POST /enrichments", () => {
  it("answers 202 with the queued run, duplicates removed by host and unusable entries counted", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .post("/api/v1/enrichments")
      .set(auth)
      .send({
        urls: [
          "https://alpha.example/contact",
          "http://www.alpha.example/",
          "beta.example",
          "nope",
          "ftp://x.example/",
        ],
      })
      .expect(202);
    expect(res.body.data).toEqual({
      id: expect.any(Number),
      status: "queued",
      urlCount: 4,
      duplicatesRemoved: 1,
      skippedInvalid: 2,
    });
    const run = await runOf(auth, res.body.data.id);
    expect(run).toMatchObject({
      status: "queued",
      contactTypes: "either",
      databaseMatchPercent: 100,
      maxCredits: null,
      emailResults: false,
      urls: { submitted: 5, duplicatesRemoved: 1, skippedInvalid: 2, total: 4, processed: 2 },
      credits: { databaseCharged: 0, liveCharged: 0, total: 0, final: false },
      result: { rowCount: 0, ready: false },
      startedAt: null,
      completedAt: null,
    });
    expect(run.credits.limit).toBeGreaterThan(0);
    // The run is queued on graphile-worker.
    const jobs = await sql<{ n: string }>`select count(*) as n from graphile_worker._private_jobs
      where key = ${`enrichment:${res.body.data.id}`}`.execute(t.ctx.db);
    expect(Number(jobs.rows[0]?.n)).toBe(1);
  });

  it("keeps the request's settings and charges nothing at submission", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const id = await submit(auth, {
      urls: ["gamma.example"],
      maxCredits: 12.37,
      databaseMatchPercent: 40,
      contactTypes: "phone",
      emailResults: true,
    });
    expect(await runOf(auth, id)).toMatchObject({
      contactTypes: "phone",
      databaseMatchPercent: 40,
      maxCredits: 12.3,
      emailResults: true,
      credits: { limit: 12.3 },
    });
    expect(await chargedTenths(accountId)).toBe(0);
  });

  it("answers 400 invalid_request with details for bad input, and creates nothing", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const bad: [object | string, string][] = [
      [{}, "urls"],
      [{ urls: [] }, "urls"],
      [{ urls: "alpha.example" }, "urls"],
      [{ urls: [1, 2] }, "urls"],
      [{ urls: ["a.example"], maxCredits: -1 }, "maxCredits"],
      [{ urls: ["a.example"], maxCredits: "5" }, "maxCredits"],
      [{ urls: ["a.example"], databaseMatchPercent: 101 }, "databaseMatchPercent"],
      [{ urls: ["a.example"], databaseMatchPercent: 5.5 }, "databaseMatchPercent"],
      [{ urls: ["a.example"], contactTypes: "fax" }, "contactTypes"],
      [{ urls: ["a.example"], emailResults: "yes" }, "emailResults"],
      ["not json", "body"],
    ];
    for (const [body, field] of bad) {
      const req = t.request().post("/api/v1/enrichments").set(auth);
      const res =
        typeof body === "string"
          ? await req.set("Content-Type", "application/json").send(body)
          : await req.send(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toBe("invalid_request");
      expect(JSON.stringify(res.body.details), JSON.stringify(body)).toContain(field);
    }
    const list = await t.request().get("/api/v1/enrichments").set(auth).expect(200);
    expect(list.body.totalCount).toBe(0);
  });

  it("refuses more than 100,000 URLs after deduplication by host, and accepts duplicates beyond it", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const tooMany = Array.from({ length: 100_001 }, (_, i) => `site${i}.example`);
    const res = await t.request().post("/api/v1/enrichments").set(auth).send({ urls: tooMany }).expect(400);
    expect(res.body).toMatchObject({ error: "invalid_request", details: [{ path: ["body", "urls"] }] });
    // 150,000 entries of 120,000 characters... of few hosts: a 27 MB body, within the 32 MB limit.
    const path = "/".padEnd(180, "p");
    const big = Array.from({ length: 150_000 }, (_, i) => `https://www.host${i % 3}.example${path}${i}`);
    expect(JSON.stringify({ urls: big }).length).toBeGreaterThan(26 * 1024 * 1024);
    const accepted = await t.request().post("/api/v1/enrichments").set(auth).send({ urls: big }).expect(202);
    expect(accepted.body.data).toMatchObject({ urlCount: 3, duplicatesRemoved: 149_997, skippedInvalid: 0 });
  });

  it("answers 413 payload_too_large above 32 MB", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const path = "/".padEnd(300, "q");
    const urls = Array.from({ length: 110_000 }, (_, i) => `https://www.host${i % 3}.example${path}${i}`);
    expect(JSON.stringify({ urls }).length).toBeGreaterThan(32 * 1024 * 1024);
    const res = await t.request().post("/api/v1/enrichments").set(auth).send({ urls }).expect(413);
    expect(res.body.error).toBe("payload_too_large");
  });

  it("needs a valid key and a paid plan", async () => {
    await expectKeyAndPlanRequired(t, [
      { method: "post", path: "/api/v1/enrichments", body: { urls: ["a.example"] } },
      { method: "get", path: "/api/v1/enrichments" },
      { method: "get", path: "/api/v1/enrichments/1" },
      { method: "get", path: "/api/v1/enrichments/1/download" },
    ]);
  });
});

describe("GET /enrichments", () => {
  it("lists the account's runs newest first with limit and offset, never another account's", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const ids: number[] = [];
    for (let i = 0; i < 3; i += 1) ids.push(await submit(auth, { urls: [`run${i}.example`] }));
    await submit(other.auth, { urls: ["theirs.example"] });
    const all = await t.request().get("/api/v1/enrichments").set(auth).expect(200);
    expect(all.body).toMatchObject({ totalCount: 3, limit: 25, offset: 0 });
    expect(all.body.data.map((run: { id: number }) => run.id)).toEqual([...ids].reverse());
    const page = await t.request().get("/api/v1/enrichments?limit=1&offset=1").set(auth).expect(200);
    expect(page.body.data.map((run: { id: number }) => run.id)).toEqual([ids[1]]);
    for (const query of ["limit=0", "limit=101", "offset=-1", "limit=x", "color=red"]) {
      const res = await t.request().get(`/api/v1/enrichments?${query}`).set(auth);
      expect(res.status, query).toBe(400);
      expect(res.body.error).toBe("validation_error");
    }
  });
});

describe("GET /enrichments/{id} and /download", () => {
  it("answers 404 for an unknown id or another account's run, and 409 while the file is not ready", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const id = await submit(auth, { urls: ["mine.example"] });
    expect((await t.request().get(`/api/v1/enrichments/${id}`).set(other.auth).expect(404)).body.error).toBe(
      "not_found",
    );
    expect(
      (await t.request().get(`/api/v1/enrichments/${id}/download`).set(other.auth).expect(404)).body.error,
    ).toBe("not_found");
    await t.request().get("/api/v1/enrichments/999999999").set(auth).expect(404);
    expect((await t.request().get("/api/v1/enrichments/abc").set(auth).expect(400)).body.error).toBe(
      "validation_error",
    );
    const res = await t.request().get(`/api/v1/enrichments/${id}/download`).set(auth).expect(409);
    expect(res.body.error).toBe("result_not_ready");
  });
});

describe("a run", () => {
  it("gives every status its cost: database matches first, live fetches for the rest", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const paid = newHost();
    const free = newHost();
    const noContact = newHost();
    const live = newHost();
    const liveBare = newHost();
    const down = newHost();
    const paidLead = await buildLead(t.ctx.db, {
      registered_url: `https://www.${paid}`,
      company_name: "Paid Co",
    });
    const freeLead = await buildLead(t.ctx.db, { crawled_url: `https://${free}/home` });
    await buildLead(t.ctx.db, { registered_url: `http://${noContact}`, phone: null, email: null });
    await markReceived(t.ctx.db, accountId, [freeLead]);
    sites.add(live, {
      "/": homePage({
        name: "Live Co",
        head: jsonLd({ "@type": "LocalBusiness", name: "Live Co LLC", telephone: "512-472-3391" }),
      }),
    });
    sites.add(liveBare, { "/": bare("Bare Co") });
    sites.add(down, { "/": { status: 500, body: "oops" } });

    const id = await submit(auth, {
      urls: [
        `https://${paid}/contact-us`,
        sites.url(free),
        sites.url(noContact),
        sites.url(live),
        sites.url(liveBare),
        sites.url(down),
        "this is not a url",
        `${sites.url(live)}about`,
      ],
    });
    await drive(id);

    const run = await runOf(auth, id);
    expect(run).toMatchObject({
      status: "completed",
      urls: { submitted: 8, duplicatesRemoved: 1, skippedInvalid: 1, total: 7, processed: 7 },
      database: {
        matched: 3,
        delivered: 2,
        charged: 1,
        free: 1,
        skippedOverBudget: 0,
        noRequestedContact: 1,
      },
      live: { sentToScraper: 3, delivered: 1, failed: 1, noRequestedContact: 1, skippedOverBudget: 0 },
      credits: { databaseCharged: 1, liveCharged: 0.1, total: 1.1, final: true },
      result: { rowCount: 7, ready: true },
      error: null,
    });
    expect(run.completedAt).not.toBeNull();
    expect(await chargedTenths(accountId)).toBe(11);
    // A URL found in the database is never fetched live.
    expect([...sites.hits(paid), ...sites.hits(free), ...sites.hits(noContact)]).toEqual([]);

    const history = await t.ctx.db
      .selectFrom("lead_export_history")
      .select(["lead_id", "export_method"])
      .where("account_id", "=", accountId)
      .orderBy("lead_id")
      .execute();
    expect(history).toEqual([
      { lead_id: Math.min(paidLead, freeLead), export_method: "enrichment" },
      { lead_id: Math.max(paidLead, freeLead), export_method: "enrichment" },
    ]);
    // Live results are never added to the lead database.
    const liveLeads = await sql<{ n: string }>`select count(*) as n from leads
      where registered_url like ${`%${live}%`} or company_name = 'Live Co LLC'`.execute(t.ctx.db);
    expect(Number(liveLeads.rows[0]?.n)).toBe(0);

    const rows = await resultFile(auth, id);
    expect(rows.map((r) => [r["Submitted URL"], r.Status, r.Source, r["Credits Charged"]])).toEqual([
      [`https://${paid}/contact-us`, "matched_paid", "database", "1"],
      [sites.url(free), "matched_free", "database", "0"],
      [sites.url(noContact), "matched_no_contact", "none", "0"],
      [sites.url(live), "scraped", "live_scrape", "0.1"],
      [sites.url(liveBare), "scraped_no_contact", "none", "0"],
      [sites.url(down), "scrape_failed", "none", "0"],
      ["this is not a url", "skipped_invalid", "none", "0"],
    ]);
    expect(rows[0]).toMatchObject({ id: String(paidLead), companyName: "Paid Co", phone: "(512) 555-0142" });
    expect(rows[3]).toMatchObject({
      companyName: "Live Co LLC",
      phone: "(512) 472-3391",
      website: sites.url(live),
    });
    expect(rows[2]?.companyName).toBe("");

    // The file is an export file of the account; the link works 5 minutes.
    const link = (await t.request().get(`/api/v1/enrichments/${id}/download`).set(auth).expect(200)).body
      .data;
    const lifetime = new Date(link.expiresAt).getTime() - Date.now();
    expect(lifetime).toBeGreaterThan(4 * 60 * 1000);
    expect(lifetime).toBeLessThanOrEqual(5 * 60 * 1000);
    // The real service's names: `downloadUrl` and `expiresInSeconds`; `url` stays as an alias.
    expect(link).toEqual({
      downloadUrl: link.url,
      expiresInSeconds: 300,
      url: expect.stringMatching(/^http/),
      expiresAt: expect.any(String),
    });
    const viaDownloadUrl = await t.request().get(new URL(link.downloadUrl).pathname);
    expect(viaDownloadUrl.status).toBe(200);

    // Processing the finished run again changes and charges nothing.
    expect(await processRunSlice(context(t), id)).toBe("busy");
    expect(await chargedTenths(accountId)).toBe(11);
  });

  it("lets unused database budget flow to live fetching, within maxCredits", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const db1 = newHost();
    const l1 = newHost();
    const l2 = newHost();
    const l3 = newHost();
    await buildLead(t.ctx.db, { registered_url: `https://${db1}` });
    for (const host of [l1, l2, l3]) sites.add(host, { "/": withPhone(host) });
    const id = await submit(auth, {
      urls: [db1, sites.url(l1), sites.url(l2), sites.url(l3)],
      maxCredits: 1.2,
    });
    await drive(id);
    const run = await runOf(auth, id);
    expect(run.database).toMatchObject({ charged: 1, skippedOverBudget: 0 });
    expect(run.live).toMatchObject({ delivered: 2, skippedOverBudget: 1 });
    expect(run.credits).toMatchObject({ databaseCharged: 1, liveCharged: 0.2, total: 1.2, limit: 1.2 });
    expect(await chargedTenths(accountId)).toBe(12);
    const statuses = (await resultFile(auth, id)).map((r) => r.Status);
    expect(statuses).toEqual(["matched_paid", "scraped", "scraped", "skipped_scrape_budget"]);
  });

  it("never lets live budget flow to new database matches (databaseMatchPercent caps them)", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const db1 = newHost();
    const db2 = newHost();
    const l1 = newHost();
    const l2 = newHost();
    const known = await buildLead(t.ctx.db, { registered_url: `https://${db1}` });
    await buildLead(t.ctx.db, { registered_url: `https://${db2}` });
    await markReceived(t.ctx.db, accountId, [known]);
    for (const host of [l1, l2]) sites.add(host, { "/": withEmail(host) });
    // 50% of 1.9 credits is 0.95: less than one new match, so the new match is skipped (the
    // already bought one stays free); live results get the whole 1.9.
    const id = await submit(auth, {
      urls: [db1, db2, sites.url(l1), sites.url(l2)],
      maxCredits: 1.9,
      databaseMatchPercent: 50,
    });
    await drive(id);
    const run = await runOf(auth, id);
    expect(run.database).toMatchObject({ charged: 0, free: 1, skippedOverBudget: 1 });
    expect(run.live).toMatchObject({ delivered: 2, skippedOverBudget: 0 });
    expect(run.credits).toMatchObject({ databaseCharged: 0, liveCharged: 0.2, total: 0.2 });
    expect(await chargedTenths(accountId)).toBe(2);
    const statuses = (await resultFile(auth, id)).map((r) => [r.Status, r.companyName === ""]);
    expect(statuses).toEqual([
      ["matched_free", false],
      ["skipped_db_budget", true],
      ["scraped", false],
      ["scraped", false],
    ]);
  });

  it("counts only results with the requested contact type (phone, email)", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const emailOnlyLead = newHost();
    const phoneSite = newHost();
    const emailSite = newHost();
    await buildLead(t.ctx.db, { registered_url: `https://${emailOnlyLead}`, phone: null, email: "a@b.test" });
    sites.add(phoneSite, { "/": withPhone(phoneSite) });
    sites.add(emailSite, { "/": withEmail(emailSite) });
    const urls = [emailOnlyLead, sites.url(phoneSite), sites.url(emailSite)];
    const phoneRun = await submit(auth, { urls, contactTypes: "phone" });
    await drive(phoneRun);
    expect((await resultFile(auth, phoneRun)).map((r) => r.Status)).toEqual([
      "matched_no_contact",
      "scraped",
      "scraped_no_contact",
    ]);
    const emailRun = await submit(auth, { urls, contactTypes: "email" });
    await drive(emailRun);
    const rows = await resultFile(auth, emailRun);
    expect(rows.map((r) => r.Status)).toEqual(["matched_paid", "scraped_no_contact", "scraped"]);
    expect(rows[2]?.email).toBe(`hello@${emailSite}`);
    expect(await chargedTenths(accountId)).toBe(1 + 10 + 1);
  });

  it("honours robots.txt and refuses redirects to private addresses (scrape_failed, free)", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const blocked = newHost();
    const sneaky = newHost();
    sites.add(blocked, { "/robots.txt": "User-agent: *\nDisallow: /\n", "/": withPhone(blocked) });
    sites.add(sneaky, { "/": { location: `http://internal-${sneaky}:${sites.port}/` } });
    sites.add(`internal-${sneaky}`, { "/": withPhone("internal") });
    const id = await submit(auth, { urls: [sites.url(blocked), sites.url(sneaky)] });
    await drive(id);
    expect((await resultFile(auth, id)).map((r) => r.Status)).toEqual(["scrape_failed", "scrape_failed"]);
    expect(sites.hits(blocked)).toEqual(["/robots.txt"]);
    expect(sites.hits(`internal-${sneaky}`)).toEqual([]);
    expect(await chargedTenths(accountId)).toBe(0);
    expect((await runOf(auth, id)).credits).toMatchObject({ total: 0, final: true });
  });

  it("charges no more than the balance when the file is published", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const hosts = [newHost(), newHost(), newHost()];
    for (const host of hosts) sites.add(host, { "/": withPhone(host) });
    const id = await submit(auth, { urls: hosts.map((h) => sites.url(h)), maxCredits: 5 });
    // Spend the whole balance but 0.2 credits before the run starts.
    await t.ctx.db.transaction().execute(async (trx) => {
      const left = spendable((await getAccountWithBalance(trx, accountId)).balance).tenths;
      await sql`insert into credit_ledger (account_id, bucket, kind, amount_tenths, reason)
        values (${accountId}, 'monthly', 'charge', ${-(left - 2)}, 'test_spend')`.execute(trx);
    });
    await drive(id);
    const run = await runOf(auth, id);
    expect(run.live).toMatchObject({ delivered: 2, skippedOverBudget: 1 });
    expect(await chargedTenths(accountId)).toBe(2);
  });

  it("ends partial when live fetching runs out of time, with the file published", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const host = `${uniqueWord()}.test`;
    sites.add(host, { "/": withPhone(host) });
    const id = await submit(auth, { urls: [sites.url(host), "junk"] });
    await drive(id, { liveTimeLimitMs: 0 });
    const run = await runOf(auth, id);
    expect(run).toMatchObject({
      status: "partial",
      live: { failed: 1, sentToScraper: 0 },
      result: { ready: true },
    });
    expect(run.error).toContain("time limit");
    expect((await resultFile(auth, id)).map((r) => r.Status)).toEqual(["scrape_failed", "skipped_invalid"]);
    expect(sites.hits(host)).toEqual([]);
  });

  it("e-mails the result file when emailResults is on", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const host = `${uniqueWord()}.test`;
    sites.add(host, { "/": withPhone(host) });
    const id = await submit(auth, { urls: [sites.url(host)], emailResults: true });
    await drive(id);
    const account = await t.ctx.db
      .selectFrom("accounts")
      .select("email")
      .where("id", "=", accountId)
      .executeTakeFirstOrThrow();
    const mails = await sql<{
      payload: { to: string; subject: string; text: string; attachments?: { filename: string }[] };
    }>`
      select j.payload from graphile_worker._private_jobs j
      join graphile_worker._private_tasks k on k.id = j.task_id
      where k.identifier = 'mail__send' and j.key = ${`enrichment-results:${id}`}`.execute(t.ctx.db);
    expect(mails.rows).toHaveLength(1);
    const mail = mails.rows[0]?.payload;
    expect(mail?.to).toBe(account.email);
    expect(mail?.subject).toContain(`run ${id}`);
    expect(mail?.attachments?.[0]?.filename).toMatch(
      new RegExp(`^enrichment-${id}-\\d{4}-\\d{2}-\\d{2}\\.csv$`),
    );
    const link = /(http\S+\/api\/v1\/files\/\S+)/.exec(mail?.text ?? "")?.[1] ?? "";
    const file = await t.request().get(new URL(link).pathname).expect(200);
    expect(file.text).toContain("scraped");
    // Without emailResults (the account setting is off), no mail.
    const quiet = await submit(auth, { urls: [sites.url(host)] });
    await drive(quiet);
    const none = await sql<{ n: string }>`select count(*) as n from graphile_worker._private_jobs
      where key = ${`enrichment-results:${quiet}`}`.execute(t.ctx.db);
    expect(Number(none.rows[0]?.n)).toBe(0);
  });

  it("survives a worker killed halfway: another worker takes over and everything is charged once", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const hosts = [newHost(), newHost(), newHost(), newHost()];
    for (const host of hosts) await buildLead(t.ctx.db, { registered_url: `https://${host}` });
    const live = `${uniqueWord()}.test`;
    sites.add(live, { "/": withPhone(live) });
    const id = await submit(auth, { urls: [...hosts, sites.url(live)] });
    const settings = { matchBatch: 2, leaseStaleMs: 300 };

    // Worker A takes the run, matches (and charges) its first batch, then dies without a word.
    const ctxA = context(t, settings);
    const run = await claimRun(t.ctx.db, id, "00000000-0000-4000-8000-00000000000a", settings.leaseStaleMs);
    expect(run?.status).toBe("matching");
    const afterFirst = await matchNextBatch(ctxA, run!, "00000000-0000-4000-8000-00000000000a");
    expect(afterFirst.database.charged).toBe(2);
    expect(await chargedTenths(accountId)).toBe(20);

    // While A's lease is fresh nobody else takes the run.
    expect(await processRunSlice(context(t, settings), id)).toBe("busy");
    // Once its heartbeat is stale the sweep queues the run and worker B finishes it.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await sweepStalledRuns(context(t, settings))).toBeGreaterThanOrEqual(1);
    await drive(id, settings);

    // A wakes up: its next step is refused, nothing is written or charged twice.
    await expect(
      matchNextBatch(ctxA, afterFirst, "00000000-0000-4000-8000-00000000000a"),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await expect(
      updateLeasedRun(t.ctx.db, id, "00000000-0000-4000-8000-00000000000a", { db_charged: 1 }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    const done = await runOf(auth, id);
    expect(done).toMatchObject({
      status: "completed",
      database: { charged: 4 },
      live: { delivered: 1 },
      credits: { databaseCharged: 4, liveCharged: 0.1, total: 4.1, final: true },
    });
    expect(await chargedTenths(accountId)).toBe(41);
    const entries = await t.ctx.db
      .selectFrom("lead_export_history")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where("account_id", "=", accountId)
      .executeTakeFirstOrThrow();
    expect(Number(entries.n)).toBe(4);
  });

  it("keeps each account's runs and results apart", async () => {
    const one = await buildAccount(t.ctx.db);
    const two = await buildAccount(t.ctx.db);
    const host = `${uniqueWord()}.test`;
    await buildLead(t.ctx.db, { registered_url: `https://${host}` });
    const first = await submit(one.auth, { urls: [host] });
    await drive(first);
    const second = await submit(two.auth, { urls: [host] });
    await drive(second);
    // Each account buys the lead once: the first account's purchase makes it free for nobody else.
    expect((await runOf(one.auth, first)).database.charged).toBe(1);
    expect((await runOf(two.auth, second)).database.charged).toBe(1);
    expect(await chargedTenths(one.accountId)).toBe(10);
    expect(await chargedTenths(two.accountId)).toBe(10);
    await t.request().get(`/api/v1/enrichments/${first}/download`).set(two.auth).expect(404);
    const theirs = await t.request().get("/api/v1/enrichments").set(two.auth).expect(200);
    expect(theirs.body.data.map((r: { id: number }) => r.id)).toEqual([second]);
  });

  it("fails after the last attempt: no file, live results not charged, database matches stay charged", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const known = newHost();
    const site = newHost();
    await buildLead(t.ctx.db, { registered_url: `https://${known}` });
    sites.add(site, { "/": withPhone(site) });
    const id = await submit(auth, { urls: [known, sites.url(site)] });
    // Storage refuses the result file (a full disk): publishing fails on every attempt.
    const ctx = context(t);
    const broken = {
      ...ctx,
      storage: { ...t.ctx.storage, put: () => Promise.reject(new Error("disk full")) } as typeof ctx.storage,
    };
    await expect(processRunSlice(broken, id, { attempts: 1, maxAttempts: 3 })).rejects.toThrow("disk full");
    expect((await runOf(auth, id)).status).toBe("merging");
    expect(await processRunSlice(broken, id, { attempts: 3, maxAttempts: 3 })).toBe("finished");
    const run = await runOf(auth, id);
    expect(run).toMatchObject({
      status: "failed",
      credits: { databaseCharged: 1, liveCharged: 0, total: 1, final: true },
      result: { ready: false },
    });
    expect(run.error).toContain("failed");
    expect(await chargedTenths(accountId)).toBe(10);
    const res = await t.request().get(`/api/v1/enrichments/${id}/download`).set(auth).expect(409);
    expect(res.body.error).toBe("result_not_ready");
    expect(await processRunSlice(context(t), id)).toBe("busy");
  });

  it("runs on graphile-worker from the queue to completed, through its statuses", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const known = newHost();
    const site = newHost();
    await buildLead(t.ctx.db, { registered_url: `https://${known}` });
    sites.add(site, { "/": withPhone(site) });
    const runner = await startEnrichmentRunner(t.ctx, outbound);
    try {
      const id = await submit(auth, { urls: [known, sites.url(site), "junk"] });
      const seen = new Set<string>();
      let run = await runOf(auth, id);
      for (let i = 0; i < 200 && run.status !== "completed"; i += 1) {
        seen.add(run.status);
        await new Promise((resolve) => setTimeout(resolve, 50));
        run = await runOf(auth, id);
      }
      expect(run).toMatchObject({
        status: "completed",
        database: { charged: 1 },
        live: { delivered: 1 },
        credits: { total: 1.1, final: true },
        result: { rowCount: 3, ready: true },
      });
      expect(run.startedAt).not.toBeNull();
      expect(seen.has("queued") || seen.has("matching")).toBe(true);
    } finally {
      await runner.stop();
    }
  });
});
