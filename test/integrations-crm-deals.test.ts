import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CrmConfig } from "../src/config.js";
import { useTestApp } from "./helpers/app.js";
import { crmOAuth, mailJobs as mailJobsOf, redirectOf } from "./helpers/crm-oauth.js";
import { parseCrontab, run } from "graphile-worker";
import { CRM_REVOKE_TASK, revokeDeleted } from "../src/integrations/crm/revoke.js";
import {
  CRM_REFRESH_CRONTAB,
  CRM_REFRESH_TASK,
  crmTaskList,
  refreshDueTokens,
} from "../src/integrations/crm/tasks.js";
import { workerLogger } from "../src/jobs/runtime.js";
import { pino } from "pino";
import { crmRuntime } from "../src/integrations/crm/runtime.js";
import { dealsAdapter } from "../src/integrations/crm/deals-adapter.js";
import { Outbound } from "../src/outbound/index.js";
import { FakeDealsCrm } from "./helpers/crm-deals-server.js";
import { startDeliveryRunner } from "./helpers/delivery-runner.js";
import { buildAccount } from "./helpers/factories.js";
import { expectKeyAndPlanRequired } from "./helpers/lead-records-factories.js";
import { buildLead } from "./helpers/leads-factories.js";

const fake = new FakeDealsCrm();
const crm: CrmConfig = {
  contacts: undefined,
  leads: undefined,
  deals: { clientId: fake.clientId, clientSecret: fake.clientSecret, apiBase: "", authBase: "" },
  tokenKeys: [randomBytes(32)],
};
beforeAll(async () => {
  await fake.start();
  // The API base is only a fallback: each company's API domain comes with its token answer.
  crm.deals!.apiBase = "http://127.0.0.1:9";
  crm.deals!.authBase = fake.url;
});
afterAll(() => fake.stop());
const t = useTestApp({ crm });

type Auth = { Authorization: string };
const { connectLink: requestLink, callback } = crmOAuth(t, "crm_deals", (link) =>
  fake.issueCode(redirectOf(link)),
);
const mailJobs = () => mailJobsOf(t);
const connectLink = (auth: Auth) => requestLink(auth);
const LEAD_ID_FIELD = "SMB lead id";

async function connected(auth: Auth): Promise<number> {
  const res = await callback((await connectLink(auth)).authorizationUrl);
  expect(res.status, res.text).toBe(200);
  expect(res.text).toContain("is connected");
  const list = await t.request().get("/api/v1/integrations").set(auth).expect(200);
  return list.body.data.find((i: { provider: string }) => i.provider === "crm_deals").id as number;
}

async function push(auth: Auth, id: number, body: object) {
  const res = await t.request().post(`/api/v1/integrations/${id}/push-lead`).set(auth).send(body).expect(200);
  return res.body.data as { status: string; result: unknown; error: string | null; tracked: boolean };
}

function leadIdCode(): string {
  return fake.personFieldCode(LEAD_ID_FIELD)!;
}

function notesOf(personId: number) {
  return fake.live("notes").filter((n) => n.data.person_id === personId);
}

describe("crm_deals: connect", () => {
  it("is available and links to the CRM's authorization page without PKCE; sandbox is refused", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const providers = await t.request().get("/api/v1/integrations/providers").set(auth).expect(200);
    expect(providers.body.data.find((p: { id: string }) => p.id === "crm_deals")).toMatchObject({
      available: true,
    });
    const link = await connectLink(auth);
    expect(link.provider).toBe("crm_deals");
    const url = new URL(link.authorizationUrl);
    expect(`${url.origin}${url.pathname}`).toBe(`${fake.url}/oauth/authorize`);
    expect(url.searchParams.get("client_id")).toBe(fake.clientId);
    expect(url.searchParams.get("redirect_uri")).toBe(
      `${t.ctx.config.publicBaseUrl}/api/v1/integrations/oauth/callback`,
    );
    expect(url.searchParams.get("state")).toEqual(expect.any(String));
    expect(url.searchParams.has("code_challenge")).toBe(false);
    const sandbox = await t
      .request()
      .post("/api/v1/integrations/crm_deals/connect")
      .set(auth)
      .send({ environment: "sandbox" })
      .expect(400);
    expect(sandbox.body.error).toBe("validation_error");
  });

  it("the callback creates the integration on the company's API domain with both events and the lead id field", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    const res = await t.request().get(`/api/v1/integrations/${id}`).set(account.auth).expect(200);
    const integration = res.body.data;
    expect(integration).toMatchObject({
      provider: "crm_deals",
      status: "connected",
      externalAccountId: String(fake.companyId),
      displayName: "Deals CRM (Example Deals Co)",
      dealSettings: { createDeals: false, pipelineId: null, stageId: null },
    });
    expect(integration.metadata).toMatchObject({ apiDomain: fake.url, leadIdField: leadIdCode() });
    const subs = integration.subscriptions.map((s: { eventType: string; isActive: boolean }) => [
      s.eventType,
      s.isActive,
    ]);
    expect(subs.sort()).toEqual([
      ["lead.created", true],
      ["lead.updated", true],
    ]);
    // Client credentials went as HTTP Basic to the configured OAuth base; the API calls to the API domain.
    const stored = await t.ctx.db
      .selectFrom("crm_connections")
      .select(["access_token", "api_base"])
      .where("integration_id", "=", id)
      .executeTakeFirstOrThrow();
    expect(stored.api_base).toBe(fake.url);
    expect([...fake.accessTokens.keys()].some((tok) => stored.access_token.includes(tok))).toBe(false);
    // A second connection of the same company reuses the lead id field.
    const fieldsBefore = fake.fields.personFields.filter((f) => f.field_name === LEAD_ID_FIELD).length;
    expect(await connected(account.auth)).toBe(id);
    expect(fake.fields.personFields.filter((f) => f.field_name === LEAD_ID_FIELD)).toHaveLength(fieldsBefore);
    expect(JSON.stringify(await mailJobs())).toContain(`Integration #${id}`);
  });

  it("refuses an API domain the outbound guard would not call, before calling it", async () => {
    const outbound = new Outbound({ allowPrivate: false });
    try {
      const runtime = crmRuntime({ db: t.ctx.db, outbound, config: t.ctx.config });
      const redirectUri = "https://app.example.com/api/v1/integrations/oauth/callback";
      const calls = fake.requests.length;
      await expect(
        dealsAdapter.exchangeCode(crm.deals!, runtime.agentFor, {
          code: fake.issueCode(redirectUri),
          redirectUri,
          environment: "production",
          checkApiBase: runtime.checkApiBase,
        }),
      ).rejects.toMatchObject({ name: "CrmApiError", message: expect.stringContaining("does not call") });
      // Only the token endpoint was called: nothing went to the refused API domain.
      expect(fake.requests.slice(calls).map((r) => r.path)).toEqual(["/oauth/token"]);
    } finally {
      outbound.close();
    }
  });

  it("a refused code connects nothing and says why", async () => {
    const account = await buildAccount(t.ctx.db);
    const res = await callback((await connectLink(account.auth)).authorizationUrl, "not-a-code");
    expect(res.status).toBe(200);
    expect(res.text).toContain("provider_error");
    const list = await t.request().get("/api/v1/integrations").set(account.auth).expect(200);
    expect(list.body.data).toHaveLength(0);
  });
});

describe("crm_deals: matching, notes, deals", () => {
  it("matches Persons by lead id then e-mail, Organizations by exact name, and adds a note each time", async () => {
    const account = await buildAccount(t.ctx.db, { permanentCredits: 10 });
    const id = await connected(account.auth);
    const company = `Deals Plumbing ${randomBytes(3).toString("hex")}`;
    const email = `jo-${randomBytes(3).toString("hex")}@deals-plumbing.com`;
    const leadId = await buildLead(t.ctx.db, { company_name: company, email, crawled_url: "https://dp.com" });

    const first = await push(account.auth, id, { leadId });
    expect(first).toMatchObject({ status: "success", tracked: true, result: null, error: null });
    const orgs = fake.live("organizations").filter((o) => o.data.name === company);
    expect(orgs).toHaveLength(1);
    const persons = fake
      .live("persons")
      .filter((p) => (p.data.custom_fields as object)?.[leadIdCode() as never]);
    const person = persons.find(
      (p) => (p.data.custom_fields as Record<string, string>)[leadIdCode()] === String(leadId),
    )!;
    expect(person.data).toMatchObject({
      name: company,
      emails: [{ value: email, primary: true, label: "work" }],
      org_id: orgs[0]!.id,
    });
    expect(notesOf(person.id)).toHaveLength(1);
    expect(notesOf(person.id)[0]!.data).toMatchObject({ org_id: orgs[0]!.id });
    expect(String(notesOf(person.id)[0]!.data.content)).toContain(`Lead id ${leadId}`);

    // The same lead again, after its e-mail changed: still the same Person (by lead id), a second note.
    await t.ctx.db
      .updateTable("leads")
      .set({ email: `new-${email}` })
      .where("id", "=", leadId)
      .execute();
    const again = await push(account.auth, id, { leadId });
    expect(again.status).toBe("success");
    expect(
      fake
        .live("persons")
        .filter((p) => (p.data.custom_fields as Record<string, string>)?.[leadIdCode()] === String(leadId)),
    ).toHaveLength(1);
    expect(notesOf(person.id)).toHaveLength(2);
    expect(fake.records.persons.get(person.id)!.data.emails).toEqual([
      { value: `new-${email}`, primary: true, label: "work" },
    ]);

    // Own data without a lead id: matched by e-mail.
    const own = await push(account.auth, id, {
      lead: { companyName: company, email: `new-${email}`, phone: "+1 512 555 0100" },
    });
    expect(own.status).toBe("success");
    expect(notesOf(person.id)).toHaveLength(3);
    expect(String(notesOf(person.id)[2]!.data.content)).toContain("no lead id");
    expect(fake.records.persons.get(person.id)!.data.phones).toEqual([
      { value: "+1 512 555 0100", primary: true, label: "work" },
    ]);
    expect(fake.live("organizations").filter((o) => o.data.name === company)).toHaveLength(1);

    // An Organization whose name differs only in case is another Organization (exact name).
    const lower = await push(account.auth, id, { lead: { companyName: company.toLowerCase() } });
    expect(lower.status).toBe("success");
    expect(
      fake.live("organizations").filter((o) => String(o.data.name).toLowerCase() === company.toLowerCase()),
    ).toHaveLength(2);

    const log = await t.request().get(`/api/v1/integrations/${id}/deliveries`).set(account.auth).expect(200);
    expect(log.body.data[0]).toMatchObject({
      targetUrl: "crm_deals://persons",
      status: "success",
      attemptCount: 1,
    });
  });

  it("creates one open Deal per Person in the chosen stage when dealSettings ask for it", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    const email = `deal-${randomBytes(3).toString("hex")}@deal-co.com`;
    const lead = { companyName: "Deal Co", email };
    await push(account.auth, id, { lead });
    const person = fake.live("persons").find((p) => String(JSON.stringify(p.data.emails)).includes(email))!;
    expect(fake.live("deals").filter((d) => d.data.person_id === person.id)).toHaveLength(0);

    const patched = await t
      .request()
      .patch(`/api/v1/integrations/${id}`)
      .set(account.auth)
      .send({ dealSettings: { createDeals: true, stageId: 21 } })
      .expect(200);
    expect(patched.body.data.dealSettings).toEqual({ createDeals: true, pipelineId: null, stageId: 21 });
    expect((await push(account.auth, id, { lead })).status).toBe("success");
    const deals = fake.live("deals").filter((d) => d.data.person_id === person.id);
    expect(deals).toHaveLength(1);
    expect(deals[0]!.data).toMatchObject({ stage_id: 21, pipeline_id: 2, title: "Deal Co", status: "open" });
    const notes = notesOf(person.id);
    expect(notes.at(-1)!.data.deal_id).toBe(deals[0]!.id);

    // A later delivery updates that Deal instead of adding one.
    expect((await push(account.auth, id, { lead })).status).toBe("success");
    expect(fake.live("deals").filter((d) => d.data.person_id === person.id)).toHaveLength(1);
  });

  it("the test writes a real sample Person and note that are not removed", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    const res = await t
      .request()
      .post(`/api/v1/integrations/${id}/test`)
      .set(account.auth)
      .send({})
      .expect(200);
    expect(res.body.data).toMatchObject({ status: "success", statusCode: 200, error: null });
    const sample = fake
      .live("persons")
      .find((p) => String(JSON.stringify(p.data.emails)).includes("sample-plumbing.example"));
    expect(sample).toBeDefined();
    expect(notesOf(sample!.id).length).toBeGreaterThan(0);
  });

  it("answers a CRM failure in data.status, renews a refused access token once, and a refused refresh needs attention", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    fake.failNext("/api/v2/organizations/search", {
      status: 500,
      body: { success: false, error: "Internal server error", errorCode: 500 },
    });
    const failed = await push(account.auth, id, { lead: { companyName: "Fail Co" } });
    expect(failed).toMatchObject({ status: "failed", result: null });
    expect(failed.error).toContain("HTTP 500");

    const tokenCalls = () => fake.requests.filter((r) => r.path === "/oauth/token").length;
    const n = tokenCalls();
    fake.accessTokens.clear();
    expect((await push(account.auth, id, { lead: { companyName: "Renewed Co" } })).status).toBe("success");
    expect(tokenCalls()).toBe(n + 1);

    await t.ctx.db
      .updateTable("integrations")
      .set({ token_expires_at: new Date(Date.now() - 1000) })
      .where("id", "=", id)
      .execute();
    fake.refreshTokens.clear();
    const lost = await push(account.auth, id, { lead: { companyName: "Lost Co" } });
    expect(lost.status).toBe("failed");
    expect(lost.error).toContain("reconnect");
    const state = await t.request().get(`/api/v1/integrations/${id}`).set(account.auth).expect(200);
    expect(state.body.data.status).toBe("needs_attention");
    expect(JSON.stringify(await mailJobs())).toContain(
      `Integration ${id} (Deals CRM) lost its authorization`,
    );
  });

  it("delivers lead events through the queue and waits out a CRM 429", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    const runner = await startDeliveryRunner(t.ctx);
    try {
      fake.failNext("/api/v2/organizations/search", {
        status: 429,
        headers: { "retry-after": "1", "x-ratelimit-remaining": "0" },
        body: { success: false, error: "Request over limit", errorCode: 429 },
      });
      const email = `queue-${randomBytes(3).toString("hex")}@queue-deals.com`;
      const { emitEvent } = await import("../src/events/outbox.js");
      await t.ctx.db.transaction().execute((trx) =>
        emitEvent(trx, {
          accountId: account.accountId,
          type: "lead.created",
          data: { id: 991, companyName: "Queue Deals", email },
        } as never),
      );
      let rows: { status: string; attempt_count: number }[] = [];
      for (let i = 0; i < 100; i += 1) {
        rows = await t.ctx.db
          .selectFrom("integration_deliveries")
          .select(["status", "attempt_count"])
          .where("integration_id", "=", id)
          .where("automatic", "=", true)
          .execute();
        if (rows[0]?.status === "success") break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ status: "success", attempt_count: 2 });
      const person = fake.live("persons").find((p) => String(JSON.stringify(p.data.emails)).includes(email))!;
      expect((person.data.custom_fields as Record<string, string>)[leadIdCode()]).toBe("991");
      const integration = await t.request().get(`/api/v1/integrations/${id}`).set(account.auth).expect(200);
      expect(integration.body.data.consecutiveFailures).toBe(0);
    } finally {
      await runner.stop();
    }
  });
});

describe("crm_deals: background token refresh", () => {
  it("is a crontab task every 5 minutes", () => {
    const [item] = parseCrontab(CRM_REFRESH_CRONTAB);
    expect(item).toMatchObject({ task: CRM_REFRESH_TASK, identifier: CRM_REFRESH_TASK });
    expect(item!.match({ min: 10, hour: 3, date: 1, month: 1, dow: 0 } as never)).toBe(true);
    expect(item!.match({ min: 11, hour: 3, date: 1, month: 1, dow: 0 } as never)).toBe(false);
  });

  it("renews tokens expiring within 15 minutes; a refused refresh needs attention and alerts the owner", async () => {
    const account = await buildAccount(t.ctx.db);
    const soon = await connected(account.auth);
    const other = await buildAccount(t.ctx.db);
    const later = await connected(other.auth);
    const third = await buildAccount(t.ctx.db);
    const refused = await connected(third.auth);
    const fourth = await buildAccount(t.ctx.db);
    const flaky = await connected(fourth.auth);
    const expiry = (id: number, ms: number) =>
      t.ctx.db
        .updateTable("integrations")
        .set({ token_expires_at: new Date(Date.now() + ms) })
        .where("id", "=", id)
        .execute();
    await expiry(soon, 10 * 60_000);
    await expiry(later, 60 * 60_000);
    await expiry(refused, 5 * 60_000);
    await expiry(flaky, 4 * 60_000);
    const tokenOf = async (id: number) =>
      (
        await t.ctx.db
          .selectFrom("crm_connections")
          .select("access_token")
          .where("integration_id", "=", id)
          .executeTakeFirstOrThrow()
      ).access_token;
    const before = { soon: await tokenOf(soon), later: await tokenOf(later), flaky: await tokenOf(flaky) };
    // The refused one's refresh token is no longer known to the CRM; the flaky one meets a 503.
    const refusedRow = await t.ctx.db
      .selectFrom("crm_connections")
      .select("refresh_token")
      .where("integration_id", "=", refused)
      .executeTakeFirstOrThrow();
    const runtime = crmRuntime({ db: t.ctx.db, outbound: t.ctx.outbound, config: t.ctx.config });
    const plain = runtime.cipher.decrypt(refusedRow.refresh_token);
    fake.refreshTokens.delete(plain);
    // Soonest expiry first: flaky (4 min) meets the 503, then refused (5 min), then soon (10 min).
    fake.failNext("/oauth/token", { status: 503, body: { success: false, error: "Service unavailable" } });

    const counts = await refreshDueTokens(runtime);
    expect(counts.lost).toBeGreaterThanOrEqual(1);

    const state = async (id: number, auth: Auth) =>
      (await t.request().get(`/api/v1/integrations/${id}`).set(auth).expect(200)).body.data;
    // The refused refresh (a 400 of the token endpoint) needs attention.
    expect((await state(refused, third.auth)).status).toBe("needs_attention");
    expect(JSON.stringify(await mailJobs())).toContain(
      `Integration ${refused} (Deals CRM) lost its authorization`,
    );
    // The 503: it stays connected with its tokens, for the next run.
    expect((await state(flaky, fourth.auth)).status).toBe("connected");
    expect(await tokenOf(flaky)).toBe(before.flaky);
    expect(counts.failed).toBeGreaterThanOrEqual(1);
    const renewed = await state(soon, account.auth);
    expect(await tokenOf(soon)).not.toBe(before.soon);
    expect(Date.parse(renewed.tokenExpiresAt)).toBeGreaterThan(Date.now() + 50 * 60_000);
    expect(await tokenOf(later)).toBe(before.later);

    // The next run renews the flaky one.
    await refreshDueTokens(runtime);
    expect(await tokenOf(flaky)).not.toBe(before.flaky);
    expect((await state(flaky, fourth.auth)).status).toBe("connected");
  });
});

describe("crm_deals: revocation after delete", () => {
  async function revokeJobs(): Promise<{ id: string; payload: Record<string, unknown> }[]> {
    const { rows } = await sql<{ id: string; payload: Record<string, unknown> }>`
      select j.id::text as id, j.payload from graphile_worker._private_jobs j
      join graphile_worker._private_tasks k on k.id = j.task_id
      where k.identifier = ${CRM_REVOKE_TASK}`.execute(t.ctx.db);
    return rows;
  }

  it("deleting queues the revocation in the same transaction; the worker revokes the refresh token at the CRM", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    const stored = await t.ctx.db
      .selectFrom("crm_connections")
      .select("refresh_token")
      .where("integration_id", "=", id)
      .executeTakeFirstOrThrow();
    const runtime = crmRuntime({ db: t.ctx.db, outbound: t.ctx.outbound, config: t.ctx.config });
    const refreshToken = runtime.cipher.decrypt(stored.refresh_token);

    // Another account cannot delete it, and nothing is queued.
    const stranger = await buildAccount(t.ctx.db);
    await t.request().delete(`/api/v1/integrations/${id}`).set(stranger.auth).expect(404);
    expect((await revokeJobs()).filter((j) => j.payload.integrationId === id)).toHaveLength(0);

    await t.request().delete(`/api/v1/integrations/${id}`).set(account.auth).expect(200);
    await t.request().get(`/api/v1/integrations/${id}`).set(account.auth).expect(404);
    const jobs = (await revokeJobs()).filter((j) => j.payload.integrationId === id);
    expect(jobs).toHaveLength(1);
    expect(JSON.stringify(jobs[0]!.payload)).not.toContain(refreshToken);

    const silent = pino({ level: "silent" });
    const runner = await run({
      pgPool: t.ctx.pool,
      concurrency: 1,
      noHandleSignals: true,
      pollInterval: 100,
      taskList: crmTaskList({ db: t.ctx.db, outbound: t.ctx.outbound, config: t.ctx.config }),
      logger: workerLogger(silent),
    });
    try {
      for (let i = 0; i < 100 && !fake.revoked.includes(refreshToken); i += 1) {
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await runner.stop();
    }
    expect(fake.revoked).toContain(refreshToken);
    expect(fake.refreshTokens.has(refreshToken)).toBe(false);
  });

  it("a grant the CRM no longer knows is done, a CRM failure is tried again, a webhook queues nothing", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    await t.request().delete(`/api/v1/integrations/${id}`).set(account.auth).expect(200);
    const job = (await revokeJobs()).find((j) => j.payload.integrationId === id)!;
    const runtime = crmRuntime({ db: t.ctx.db, outbound: t.ctx.outbound, config: t.ctx.config });
    fake.failNext("/oauth/revoke", { status: 502, body: { success: false, error: "Bad gateway" } });
    await expect(revokeDeleted(runtime, job.payload)).rejects.toMatchObject({ statusCode: 502 });
    fake.failNext("/oauth/revoke", { status: 400, body: { success: false, error: "invalid_token" } });
    expect(await revokeDeleted(runtime, job.payload)).toBe("gone");
    expect(await revokeDeleted(runtime, { nonsense: true })).toBe("skipped");

    const hook = await t
      .request()
      .post("/api/v1/integrations/webhook")
      .set(account.auth)
      .send({
        provider: "generic_webhook",
        displayName: "h",
        targetUrl: "https://h.example.com/r",
        events: ["lead.created"],
      })
      .expect(201);
    const before = (await revokeJobs()).length;
    await t
      .request()
      .delete(`/api/v1/integrations/${hook.body.data.integration.id}`)
      .set(account.auth)
      .expect(200);
    expect(await revokeJobs()).toHaveLength(before);
  });
});

describe("crm_deals: field mapping, pipelines and deal fields", () => {
  it("GET lists person and organization fields (writable ones, all pages), cached; deal fields on their route", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    const res = await t
      .request()
      .get(`/api/v1/integrations/${id}/field-mapping`)
      .set(account.auth)
      .expect(200);
    const data = res.body.data;
    expect(data.mapping).toEqual({ person: [], organization: [], deal: [] });
    const personNames = data.personFields.map((f: { name: string }) => f.name);
    expect(personNames).toContain("name");
    expect(personNames).toContain("job_title");
    expect(personNames).toContain(leadIdCode());
    expect(personNames).not.toContain("org_id");
    const enumField = fake.fields.personFields.find((f) => f.field_type === "enum")!;
    expect(personNames).not.toContain(enumField.field_code);
    expect(data.personFields.find((f: { name: string }) => f.name === "name")).toMatchObject({
      required: true,
    });
    expect(data.organizationFields.map((f: { name: string }) => f.name)).toEqual(
      expect.arrayContaining(["name", "address", "website"]),
    );
    expect(data).not.toHaveProperty("contactFields");

    const reads = () => fake.requests.filter((r) => r.path.endsWith("Fields") && r.method === "GET").length;
    const n = reads();
    const deal = await t
      .request()
      .get(`/api/v1/integrations/${id}/deals-crm/deal-fields`)
      .set(account.auth)
      .expect(200);
    expect(reads()).toBe(n);
    expect(deal.body.data.cachedAt).toBe(data.cachedAt);
    expect(deal.body.data.smbFields.map((f: { id: string }) => f.id)).toContain("companyName");
    const dealNames = deal.body.data.dealFields.map((f: { name: string }) => f.name);
    expect(dealNames).toEqual(expect.arrayContaining(["title", "value", "expected_close_date"]));
    expect(dealNames).not.toContain("stage_id");
    expect(deal.body.data.fieldMap).toEqual([]);
    await t
      .request()
      .get(`/api/v1/integrations/${id}/deals-crm/deal-fields?refresh=true`)
      .set(account.auth)
      .expect(200);
    expect(reads()).toBeGreaterThan(n + 3);
  });

  it("lists pipelines with their stages in order", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    const res = await t
      .request()
      .get(`/api/v1/integrations/${id}/deals-crm/pipelines`)
      .set(account.auth)
      .expect(200);
    expect(res.body.data).toEqual([
      {
        id: 1,
        name: "Sales",
        active: true,
        stages: [
          { id: 11, name: "Qualified", orderNr: 1 },
          { id: 12, name: "Contacted", orderNr: 2 },
        ],
      },
      { id: 2, name: "Partners", active: true, stages: [{ id: 21, name: "Intro", orderNr: 1 }] },
    ]);
  });

  it("PATCH saves person, organization and deal scopes (used by writes); other scopes are refused", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    const detail = fake.fields.personFields.find((f) => f.field_name === "Lead source detail")!.field_code;
    const employees = fake.fields.personFields.find((f) => f.field_name === "Employees")!.field_code;
    const category = fake.fields.dealFields.find((f) => f.field_name === "Lead category")!.field_code;
    const saved = await t
      .request()
      .patch(`/api/v1/integrations/${id}/field-mapping`)
      .set(account.auth)
      .send({
        mapping: {
          person: [
            { smbFieldId: "category", targetField: detail },
            { smbFieldId: "zip", targetField: employees },
            { smbFieldId: "city", targetField: "org_id" },
          ],
          organization: [{ smbFieldId: "website", targetField: "website" }],
          deal: [{ smbFieldId: "category", targetField: category }],
        },
      })
      .expect(200);
    expect(saved.body.data.mapping).toEqual({
      person: [
        { smbFieldId: "category", targetField: detail },
        { smbFieldId: "zip", targetField: employees },
      ],
      organization: [{ smbFieldId: "website", targetField: "website" }],
      deal: [{ smbFieldId: "category", targetField: category }],
    });
    const other = await t
      .request()
      .patch(`/api/v1/integrations/${id}/field-mapping`)
      .set(account.auth)
      .send({ mapping: { contact: [] } })
      .expect(400);
    expect(other.body.error).toBe("validation_error");
    const fields = await t
      .request()
      .get(`/api/v1/integrations/${id}/deals-crm/deal-fields`)
      .set(account.auth)
      .expect(200);
    expect(fields.body.data.fieldMap).toEqual([{ smbFieldId: "category", targetField: category }]);

    await t
      .request()
      .patch(`/api/v1/integrations/${id}`)
      .set(account.auth)
      .send({ dealSettings: { createDeals: true } })
      .expect(200);
    const email = `map-${randomBytes(3).toString("hex")}@map-deals.com`;
    const pushed = await push(account.auth, id, {
      lead: {
        companyName: "Map Deals",
        email,
        category: "Roofer",
        zip: "78701",
        website: "https://mapdeals.com",
      },
    });
    expect(pushed.status).toBe("success");
    const person = fake.live("persons").find((p) => String(JSON.stringify(p.data.emails)).includes(email))!;
    expect(person.data.custom_fields).toMatchObject({ [detail]: "Roofer", [employees]: 78701 });
    expect(fake.records.organizations.get(person.data.org_id as number)!.data.website).toBe(
      "https://mapdeals.com",
    );
    const deal = fake.live("deals").find((d) => d.data.person_id === person.id)!;
    expect(deal.data.custom_fields).toMatchObject({ [category]: "Roofer" });

    const reset = await t
      .request()
      .delete(`/api/v1/integrations/${id}/field-mapping`)
      .set(account.auth)
      .expect(200);
    expect(reset.body.data.mapping).toEqual({ person: [], organization: [], deal: [] });
  });

  it("the dry run creates then deletes a synthetic Organization, Person and Deal and reports refused fields", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    const detail = fake.fields.personFields.find((f) => f.field_name === "Lead source detail")!.field_code;
    await t
      .request()
      .patch(`/api/v1/integrations/${id}/field-mapping`)
      .set(account.auth)
      .send({
        mapping: {
          person: [{ smbFieldId: "category", targetField: detail }],
          deal: [{ smbFieldId: "lastBuyingSignal", targetField: "expected_close_date" }],
        },
      })
      .expect(200);
    const live = () =>
      fake.live("organizations").length + fake.live("persons").length + fake.live("deals").length;
    const before = live();
    fake.refusedFields.add(detail);
    try {
      const res = await t
        .request()
        .post(`/api/v1/integrations/${id}/field-mapping/test`)
        .set(account.auth)
        .expect(200);
      expect(res.body.data.ok).toBe(false);
      const [person, organization, deal] = res.body.data.scopes;
      expect(person).toMatchObject({ scope: "person", label: "Persons", ok: false });
      expect(person.issues).toEqual([
        {
          smbFieldId: "category",
          targetField: detail,
          message: expect.stringContaining(detail),
          severity: "error",
        },
      ]);
      expect(organization).toMatchObject({
        scope: "organization",
        label: "Organizations",
        ok: true,
        issues: [],
      });
      expect(deal).toMatchObject({ scope: "deal", label: "Deals", ok: true, issues: [] });
    } finally {
      fake.refusedFields.clear();
    }
    expect(live()).toBe(before);
    const ok = await t
      .request()
      .post(`/api/v1/integrations/${id}/field-mapping/test`)
      .set(account.auth)
      .expect(200);
    expect(ok.body.data).toMatchObject({ ok: true });
    expect(live()).toBe(before);
    const createdDeal = fake.requests
      .filter((r) => r.path === "/api/v2/deals" && r.method === "POST")
      .at(-1)!;
    expect(createdDeal.body).toMatchObject({ expected_close_date: "2026-11-01" });
  });

  it("answers 502 provider_error when the CRM fails or limits, 400 on another kind of integration, 404 across accounts", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    fake.failNext("/api/v2/pipelines", {
      status: 503,
      body: { success: false, error: "Service unavailable" },
    });
    const down = await t
      .request()
      .get(`/api/v1/integrations/${id}/deals-crm/pipelines`)
      .set(account.auth)
      .expect(502);
    expect(down.body.error).toBe("provider_error");
    fake.failNext("/api/v2/dealFields", {
      status: 429,
      headers: { "retry-after": "2" },
      body: { success: false, error: "Request over limit", errorCode: 429 },
    });
    const limited = await t
      .request()
      .get(`/api/v1/integrations/${id}/deals-crm/deal-fields?refresh=true`)
      .set(account.auth)
      .expect(502);
    expect(limited.body.error).toBe("provider_error");

    const hook = await t
      .request()
      .post("/api/v1/integrations/webhook")
      .set(account.auth)
      .send({
        provider: "generic_webhook",
        displayName: "h",
        targetUrl: "https://h.example.com/d",
        events: ["lead.created"],
      })
      .expect(201);
    const contacts = await t.ctx.db
      .insertInto("integrations")
      .values({
        account_id: account.accountId,
        provider: "crm_contacts",
        display_name: "Contacts CRM",
        target_url: null,
        signing_secret: "whsec_x",
        external_account_id: "1",
        metadata: "{}",
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    for (const other of [hook.body.data.integration.id as number, contacts.id]) {
      for (const path of ["deals-crm/pipelines", "deals-crm/deal-fields"]) {
        const res = await t
          .request()
          .get(`/api/v1/integrations/${other}/${path}`)
          .set(account.auth)
          .expect(400);
        expect(res.body.error).toBe("bad_request");
      }
    }
    const stranger = await buildAccount(t.ctx.db);
    for (const path of ["deals-crm/pipelines", "deals-crm/deal-fields", "field-mapping"]) {
      const res = await t.request().get(`/api/v1/integrations/${id}/${path}`).set(stranger.auth).expect(404);
      expect(res.body.error).toBe("not_found");
    }
    const bad = await t
      .request()
      .get(`/api/v1/integrations/${id}/deals-crm/deal-fields?refresh=maybe`)
      .set(account.auth)
      .expect(400);
    expect(bad.body.error).toBe("validation_error");
    await t.request().get(`/api/v1/integrations/abc/deals-crm/pipelines`).set(account.auth).expect(400);
  });

  it("needs a valid key of a paid account", async () => {
    await expectKeyAndPlanRequired(t, [
      { method: "get", path: "/api/v1/integrations/1/deals-crm/pipelines" },
      { method: "get", path: "/api/v1/integrations/1/deals-crm/deal-fields" },
      { method: "post", path: "/api/v1/integrations/crm_deals/connect", body: {} },
    ]);
  });
});
