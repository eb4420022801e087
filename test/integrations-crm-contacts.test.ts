import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey } from "../src/auth/api-keys.js";
import { revokeKeyByHash } from "../src/auth/repository.js";
import type { CrmConfig } from "../src/config.js";
import { useTestApp } from "./helpers/app.js";
import { crmOAuth, mailJobs as mailJobsOf, redirectOf } from "./helpers/crm-oauth.js";
import { CRM_REVOKE_TASK, revokeDeleted } from "../src/integrations/crm/revoke.js";
import { crmRuntime } from "../src/integrations/crm/runtime.js";
import { FakeContactsCrm } from "./helpers/crm-contacts-server.js";
import { startDeliveryRunner } from "./helpers/delivery-runner.js";
import { buildAccount, buildKey } from "./helpers/factories.js";
import { expectKeyAndPlanRequired } from "./helpers/lead-records-factories.js";
import { buildLead } from "./helpers/leads-factories.js";

const fake = new FakeContactsCrm();
const crm: CrmConfig = {
  contacts: { clientId: fake.clientId, clientSecret: fake.clientSecret, apiBase: "", authBase: "" },
  leads: undefined,
  deals: undefined,
  tokenKeys: [randomBytes(32)],
};
beforeAll(async () => {
  await fake.start();
  crm.contacts!.apiBase = fake.url;
  crm.contacts!.authBase = fake.url;
});
afterAll(() => fake.stop());
const t = useTestApp({ crm });

type Auth = { Authorization: string };
const { connectLink: requestLink, callback } = crmOAuth(t, "crm_contacts", (link) =>
  fake.issueCode(redirectOf(link)),
);
const mailJobs = () => mailJobsOf(t);
const connectLink = (auth: Auth) => requestLink(auth);

async function connected(auth: Auth): Promise<number> {
  const link = await connectLink(auth);
  const res = await callback(link.authorizationUrl);
  expect(res.status).toBe(200);
  expect(res.text).toContain("connected");
  const list = await t.request().get("/api/v1/integrations").set(auth).expect(200);
  return list.body.data.find((i: { provider: string }) => i.provider === "crm_contacts").id as number;
}

describe("crm_contacts: catalog and connect", () => {
  it("lists crm_contacts as available and the unconfigured CRMs with why", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t.request().get("/api/v1/integrations/providers").set(auth).expect(200);
    const byId = new Map(res.body.data.map((p: { id: string }) => [p.id, p]));
    expect(byId.get("crm_contacts")).toMatchObject({ available: true });
    expect(byId.get("crm_contacts") as object).not.toHaveProperty("reason");
    expect(byId.get("crm_leads")).toMatchObject({ available: false, reason: expect.any(String) });
    expect(byId.get("crm_deals")).toMatchObject({ available: false, reason: expect.any(String) });
  });

  it("answers a 10-minute authorization link bound to a stored, hashed state", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const before = Date.now();
    const link = await connectLink(auth);
    expect(link.provider).toBe("crm_contacts");
    const url = new URL(link.authorizationUrl);
    expect(`${url.origin}${url.pathname}`).toBe(`${fake.url}/oauth/authorize`);
    expect(url.searchParams.get("client_id")).toBe(fake.clientId);
    expect(url.searchParams.get("redirect_uri")).toBe(
      `${t.ctx.config.publicBaseUrl}/api/v1/integrations/oauth/callback`,
    );
    expect(url.searchParams.get("scope")).toContain("crm.objects.contacts.write");
    expect(url.searchParams.has("code_challenge")).toBe(false);
    const expires = Date.parse(link.expiresAt) - before;
    expect(expires).toBeGreaterThan(9.9 * 60_000);
    expect(expires).toBeLessThanOrEqual(10 * 60_000 + 1000);
    const states = await t.ctx.db.selectFrom("crm_oauth_states").select("state_hash").execute();
    expect(states.map((s) => s.state_hash)).not.toContain(url.searchParams.get("state"));
  });

  it("refuses unknown providers (404), webhooks (404), sandbox (400), unconfigured CRMs (503)", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    for (const provider of ["nope", "generic_webhook"]) {
      const res = await t
        .request()
        .post(`/api/v1/integrations/${provider}/connect`)
        .set(auth)
        .send({})
        .expect(404);
      expect(res.body.error).toBe("not_found");
    }
    const sandbox = await t
      .request()
      .post("/api/v1/integrations/crm_contacts/connect")
      .set(auth)
      .send({ environment: "sandbox" })
      .expect(400);
    expect(sandbox.body.error).toBe("validation_error");
    const bad = await t
      .request()
      .post("/api/v1/integrations/crm_contacts/connect")
      .set(auth)
      .send({ environment: "moon" })
      .expect(400);
    expect(bad.body.error).toBe("validation_error");
    for (const provider of ["crm_leads", "crm_deals"]) {
      const res = await t
        .request()
        .post(`/api/v1/integrations/${provider}/connect`)
        .set(auth)
        .send({})
        .expect(503);
      expect(res.body.error).toBe("provider_unavailable");
      expect(res.headers["retry-after"]).toBeUndefined();
    }
  });

  it("needs a valid key of a paid account", async () => {
    await expectKeyAndPlanRequired(t, [
      { method: "post", path: "/api/v1/integrations/crm_contacts/connect", body: {} },
    ]);
  });

  it("creates the integration at the callback with the default events, encrypted tokens and a mail", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    const res = await t.request().get(`/api/v1/integrations/${id}`).set(account.auth).expect(200);
    const integration = res.body.data;
    expect(integration).toMatchObject({
      provider: "crm_contacts",
      status: "connected",
      authMethod: "oauth2",
      externalAccountId: String(fake.hubId),
      targetUrl: null,
      dealSettings: null,
    });
    expect(Date.parse(integration.tokenExpiresAt)).toBeGreaterThan(Date.now() + 25 * 60_000);
    const subs = integration.subscriptions.map((s: { eventType: string; isActive: boolean }) => [
      s.eventType,
      s.isActive,
    ]);
    expect(subs.sort()).toEqual([
      ["lead.created", true],
      ["lead.updated", false],
    ]);
    const stored = await t.ctx.db
      .selectFrom("crm_connections")
      .selectAll()
      .where("integration_id", "=", id)
      .executeTakeFirstOrThrow();
    expect([...fake.accessTokens.keys()].some((tok) => stored.access_token.includes(tok))).toBe(false);
    expect(stored.access_token.startsWith("v1.")).toBe(true);
    const mails = await mailJobs();
    expect(JSON.stringify(mails)).toContain(`Integration #${id}`);
  });

  it("reconnecting the same CRM account renews it instead of adding one", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    await t.ctx.db
      .updateTable("integrations")
      .set({ status: "needs_attention" })
      .where("id", "=", id)
      .execute();
    const again = await connected(account.auth);
    expect(again).toBe(id);
    const list = await t.request().get("/api/v1/integrations").set(account.auth).expect(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0].status).toBe("connected");
  });

  it("refuses a used, forged or expired state, and a state whose key was revoked", async () => {
    const account = await buildAccount(t.ctx.db);
    const link = await connectLink(account.auth);
    expect((await callback(link.authorizationUrl)).status).toBe(200);
    const reused = await callback(link.authorizationUrl);
    expect(reused.status).toBe(400);
    expect(reused.headers["content-type"]).toContain("text/html");
    // Shown by the browser, not downloaded.
    expect(reused.headers["content-disposition"]).toMatch(/^inline; filename="/);
    const forged = await t.request().get("/api/v1/integrations/oauth/callback?state=forged&code=x");
    expect(forged.status).toBe(400);

    const expiring = await connectLink(account.auth);
    await t.ctx.db
      .updateTable("crm_oauth_states")
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where("account_id", "=", account.accountId)
      .execute();
    expect((await callback(expiring.authorizationUrl)).status).toBe(400);

    const other = await buildAccount(t.ctx.db);
    const second = await buildKey(t.ctx.db, other.accountId);
    const revokedLink = await connectLink(second.auth);
    await revokeKeyByHash(t.ctx.db, hashApiKey(second.apiKey));
    const revoked = await callback(revokedLink.authorizationUrl);
    expect(revoked.status).toBe(400);
    expect(revoked.text).toContain("key_revoked");
    const list = await t.request().get("/api/v1/integrations").set(other.auth).expect(200);
    expect(list.body.data).toHaveLength(0);
  });

  it("shows the CRM's refusal on the page and connects nothing", async () => {
    const account = await buildAccount(t.ctx.db);
    const link = await connectLink(account.auth);
    const state = new URL(link.authorizationUrl).searchParams.get("state")!;
    const denied = await t
      .request()
      .get(
        `/api/v1/integrations/oauth/callback?state=${state}&error=access_denied&error_description=User+said+no`,
      );
    expect(denied.status, denied.text).toBe(200);
    expect(denied.text).toContain("User said no");
    const badCode = await callback((await connectLink(account.auth)).authorizationUrl, "not-a-code");
    expect(badCode.status).toBe(200);
    expect(badCode.text).toContain("provider_error");
    const list = await t.request().get("/api/v1/integrations").set(account.auth).expect(200);
    expect(list.body.data).toHaveLength(0);
  });

  it("refuses a connect past 25 integrations unless the CRM is already connected", async () => {
    const account = await buildAccount(t.ctx.db);
    for (let i = 0; i < 25; i += 1) {
      await t
        .request()
        .post("/api/v1/integrations/webhook")
        .set(account.auth)
        .send({
          provider: "generic_webhook",
          displayName: `h${i}`,
          targetUrl: `https://h.example.com/${i}`,
          events: ["lead.created"],
        })
        .expect(201);
    }
    const res = await t
      .request()
      .post("/api/v1/integrations/crm_contacts/connect")
      .set(account.auth)
      .send({})
      .expect(409);
    expect(res.body.error).toBe("integration_limit");
  });
});

describe("crm_contacts: writes, matching, push, test, deliveries", () => {
  it("pushes own data: Company by website domain, Contact by e-mail, linked", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    const lead = {
      companyName: "Acme Plumbing",
      website: "https://www.acme-plumbing.com/about",
      email: "jo@acme-plumbing.com",
      phone: "+1 512 555 0199",
      city: "Austin",
    };
    const first = await t
      .request()
      .post(`/api/v1/integrations/${id}/push-lead`)
      .set(account.auth)
      .send({ lead })
      .expect(200);
    expect(first.body.data).toMatchObject({ status: "success", tracked: false, creditsUsed: 0, error: null });
    const { contactId, companyId } = first.body.data.result;
    expect(fake.records.companies.get(companyId)!.properties).toMatchObject({
      name: "Acme Plumbing",
      domain: "acme-plumbing.com",
    });
    expect(fake.records.contacts.get(contactId)!.properties).toMatchObject({
      email: "jo@acme-plumbing.com",
      company: "Acme Plumbing",
      city: "Austin",
    });
    expect(fake.associations).toContainEqual([contactId, companyId]);

    // The same e-mail and domain update the same records.
    const again = await t
      .request()
      .post(`/api/v1/integrations/${id}/push-lead`)
      .set(account.auth)
      .send({
        lead: { ...lead, companyName: "Acme Plumbing LLC", website: "acme-plumbing.com", city: "Dallas" },
      })
      .expect(200);
    expect(again.body.data.result).toEqual({ contactId, companyId });
    expect(fake.records.contacts.get(contactId)!.properties.city).toBe("Dallas");
    expect(fake.records.companies.get(companyId)!.properties.name).toBe("Acme Plumbing LLC");

    const log = await t.request().get(`/api/v1/integrations/${id}/deliveries`).set(account.auth).expect(200);
    expect(log.body.data[0]).toMatchObject({
      targetUrl: "crm_contacts://contacts",
      status: "success",
      attemptCount: 1,
    });
  });

  it("matches a Company by exact name when the website is a social or listing page, and writes no Contact without e-mail", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    const name = `Bob's Bakery ${randomBytes(3).toString("hex")}`;
    const first = await t
      .request()
      .post(`/api/v1/integrations/${id}/push-lead`)
      .set(account.auth)
      .send({ lead: { companyName: name, website: "https://www.facebook.com/bobsbakery" } })
      .expect(200);
    expect(first.body.data.result).toEqual({ companyId: expect.any(String) });
    const companyId = first.body.data.result.companyId;
    expect(fake.records.companies.get(companyId)!.properties.domain).toBeUndefined();
    const second = await t
      .request()
      .post(`/api/v1/integrations/${id}/push-lead`)
      .set(account.auth)
      .send({ lead: { companyName: name } })
      .expect(200);
    expect(second.body.data.result).toEqual({ companyId });
  });

  it("pushes a database lead by id (1 credit, tracked) and answers result null when nothing is written", async () => {
    const account = await buildAccount(t.ctx.db, { permanentCredits: 10 });
    const id = await connected(account.auth);
    const leadId = await buildLead(t.ctx.db, {
      company_name: "Lead Co",
      email: "owner@leadco.com",
      crawled_url: "https://leadco.com",
    });
    const res = await t
      .request()
      .post(`/api/v1/integrations/${id}/push-lead`)
      .set(account.auth)
      .send({ leadId })
      .expect(200);
    expect(res.body.data).toMatchObject({ status: "success", tracked: true });
    expect(res.body.data.result.contactId).toEqual(expect.any(String));
    const empty = await t
      .request()
      .post(`/api/v1/integrations/${id}/push-lead`)
      .set(account.auth)
      .send({ lead: { phone: "1" } })
      .expect(200);
    expect(empty.body.data).toMatchObject({ status: "success", result: null });
  });

  it("test writes a real sample record that is not removed", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    const res = await t
      .request()
      .post(`/api/v1/integrations/${id}/test`)
      .set(account.auth)
      .send({})
      .expect(200);
    expect(res.body.data).toMatchObject({ status: "success", statusCode: 200, error: null });
    expect(fake.live("contacts").some((c) => c.properties.email === "owner@sample-plumbing.example")).toBe(
      true,
    );
    const exportTest = await t
      .request()
      .post(`/api/v1/integrations/${id}/test`)
      .set(account.auth)
      .send({ eventType: "export.leads" })
      .expect(400);
    expect(exportTest.body.error).toBe("validation_error");
  });

  it("answers a CRM failure in data.status with its status", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    fake.failNext("/crm/v3/objects/companies/search", {
      status: 500,
      body: { status: "error", message: "internal" },
    });
    const failed = await t
      .request()
      .post(`/api/v1/integrations/${id}/push-lead`)
      .set(account.auth)
      .send({ lead: { companyName: "X", email: "x@x-co.com" } })
      .expect(200);
    expect(failed.body.data).toMatchObject({ status: "failed", result: null });
    expect(failed.body.data.error).toContain("HTTP 500");
  });

  it("retries a failed CRM delivery once as a new write", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    fake.failNext("/crm/v3/objects/contacts/search", {
      status: 502,
      body: { status: "error", message: "bad gateway" },
    });
    const failed = await t
      .request()
      .post(`/api/v1/integrations/${id}/push-lead`)
      .set(account.auth)
      .send({ lead: { companyName: "Retry Co", email: "r@retry-co.com" } })
      .expect(200);
    expect(failed.body.data.status).toBe("failed");
    const log = await t.request().get(`/api/v1/integrations/${id}/deliveries`).set(account.auth).expect(200);
    expect(log.body.data[0]).toMatchObject({
      status: "failed",
      statusCode: 502,
      targetUrl: "crm_contacts://contacts",
    });
    const retried = await t
      .request()
      .post(`/api/v1/integrations/${id}/deliveries/${log.body.data[0].id}/retry`)
      .set(account.auth)
      .expect(200);
    expect(retried.body.data).toMatchObject({ status: "success", statusCode: 200, error: null });
    expect(fake.live("contacts").some((c) => c.properties.email === "r@retry-co.com")).toBe(true);
  });

  it("refreshes tokens before they expire; a refused refresh moves it to needs_attention and mails the owner", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    await t.ctx.db
      .updateTable("integrations")
      .set({ token_expires_at: new Date(Date.now() + 60_000) })
      .where("id", "=", id)
      .execute();
    const before = await t.ctx.db
      .selectFrom("crm_connections")
      .select("access_token")
      .where("integration_id", "=", id)
      .executeTakeFirstOrThrow();
    const ok = await t
      .request()
      .post(`/api/v1/integrations/${id}/push-lead`)
      .set(account.auth)
      .send({ lead: { companyName: "Fresh Co", email: "a@fresh-co.com" } })
      .expect(200);
    expect(ok.body.data.status).toBe("success");
    const after = await t.ctx.db
      .selectFrom("crm_connections")
      .select("access_token")
      .where("integration_id", "=", id)
      .executeTakeFirstOrThrow();
    expect(after.access_token).not.toBe(before.access_token);
    const refreshed = await t.request().get(`/api/v1/integrations/${id}`).set(account.auth).expect(200);
    expect(Date.parse(refreshed.body.data.tokenExpiresAt)).toBeGreaterThan(Date.now() + 20 * 60_000);

    await t.ctx.db
      .updateTable("integrations")
      .set({ token_expires_at: new Date(Date.now() - 1000) })
      .where("id", "=", id)
      .execute();
    fake.refreshTokens.clear();
    const lost = await t
      .request()
      .post(`/api/v1/integrations/${id}/push-lead`)
      .set(account.auth)
      .send({ lead: { companyName: "Lost Co" } })
      .expect(200);
    expect(lost.body.data.status).toBe("failed");
    expect(lost.body.data.error).toContain("reconnect");
    const state = await t.request().get(`/api/v1/integrations/${id}`).set(account.auth).expect(200);
    expect(state.body.data.status).toBe("needs_attention");
    const mails = await mailJobs();
    expect(JSON.stringify(mails)).toContain(`Integration ${id} (Contacts CRM) lost its authorization`);
  });

  it("renews an access token the CRM refuses (401) once and makes the call again", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    const refreshCalls = () => fake.requests.filter((r) => r.path === "/oauth/v1/token").length;
    const n = refreshCalls();
    fake.accessTokens.clear();
    const res = await t
      .request()
      .post(`/api/v1/integrations/${id}/push-lead`)
      .set(account.auth)
      .send({ lead: { companyName: "Revoked Token Co", email: "r@revoked-token.com" } })
      .expect(200);
    expect(res.body.data.status).toBe("success");
    expect(refreshCalls()).toBe(n + 1);
  });

  it("delivers lead events through the queue to the CRM, and waits out a CRM 429", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    const runner = await startDeliveryRunner(t.ctx);
    try {
      fake.failNext("/crm/v3/objects/companies/search", {
        status: 429,
        headers: { "retry-after": "1" },
        body: {
          status: "error",
          message: "You have reached your secondly limit.",
          errorType: "RATE_LIMIT",
          policyName: "SECONDLY",
        },
      });
      const email = `queue-${randomBytes(3).toString("hex")}@queue-co.com`;
      // An event of the account: a live lead.created through the outbox.
      const { emitEvent } = await import("../src/events/outbox.js");
      await t.ctx.db.transaction().execute((trx) =>
        emitEvent(trx, {
          accountId: account.accountId,
          type: "lead.created",
          data: { id: 5, companyName: "Queue Co", website: "https://queue-co.com", email },
        } as never),
      );
      let rows: { status: string; status_code: number | null; attempt_count: number }[] = [];
      for (let i = 0; i < 100; i += 1) {
        rows = await t.ctx.db
          .selectFrom("integration_deliveries")
          .select(["status", "status_code", "attempt_count"])
          .where("integration_id", "=", id)
          .where("automatic", "=", true)
          .execute();
        if (rows[0]?.status === "success") break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ status: "success", attempt_count: 2 });
      expect(fake.live("contacts").some((c) => c.properties.email === email)).toBe(true);
      const integration = await t.request().get(`/api/v1/integrations/${id}`).set(account.auth).expect(200);
      expect(integration.body.data.consecutiveFailures).toBe(0);
    } finally {
      await runner.stop();
    }
  });
});

describe("crm_contacts: field mapping", () => {
  it("GET lists the service's and the CRM's fields, cached for 10 minutes (refresh reloads)", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    const first = await t
      .request()
      .get(`/api/v1/integrations/${id}/field-mapping`)
      .set(account.auth)
      .expect(200);
    const data = first.body.data;
    expect(data.smbFields.map((f: { id: string }) => f.id)).toContain("companyName");
    expect(data.contactFields.map((f: { name: string }) => f.name)).toContain("email");
    expect(data.contactFields.map((f: { name: string }) => f.name)).not.toContain("hs_object_id");
    expect(data.companyFields.map((f: { name: string }) => f.name)).toContain("domain");
    expect(data.mapping).toEqual({ contact: [], company: [] });
    const reads = () => fake.requests.filter((r) => r.path.startsWith("/crm/v3/properties/")).length;
    const n = reads();
    const cached = await t
      .request()
      .get(`/api/v1/integrations/${id}/field-mapping`)
      .set(account.auth)
      .expect(200);
    expect(cached.body.data.cachedAt).toBe(data.cachedAt);
    expect(reads()).toBe(n);
    const fresh = await t
      .request()
      .get(`/api/v1/integrations/${id}/field-mapping?refresh=true`)
      .set(account.auth)
      .expect(200);
    expect(reads()).toBe(n + 2);
    expect(Date.parse(fresh.body.data.cachedAt)).toBeGreaterThanOrEqual(Date.parse(data.cachedAt));
  });

  it("PATCH replaces the mapping, drops unknown ids, refuses other scopes or none; DELETE resets", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    const saved = await t
      .request()
      .patch(`/api/v1/integrations/${id}/field-mapping`)
      .set(account.auth)
      .send({
        mapping: {
          contact: [
            { smbFieldId: "category", targetField: "jobtitle" },
            { smbFieldId: "nope", targetField: "jobtitle" },
            { smbFieldId: "city", targetField: "no_such_field" },
          ],
        },
      })
      .expect(200);
    expect(saved.body.data.mapping).toEqual({
      contact: [{ smbFieldId: "category", targetField: "jobtitle" }],
      company: [],
    });
    const other = await t
      .request()
      .patch(`/api/v1/integrations/${id}/field-mapping`)
      .set(account.auth)
      .send({ mapping: { lead: [] } })
      .expect(400);
    expect(other.body.error).toBe("validation_error");
    const none = await t
      .request()
      .patch(`/api/v1/integrations/${id}/field-mapping`)
      .set(account.auth)
      .send({ mapping: {} })
      .expect(400);
    expect(none.body.error).toBe("validation_error");

    // The mapping is used by deliveries.
    const push = await t
      .request()
      .post(`/api/v1/integrations/${id}/push-lead`)
      .set(account.auth)
      .send({ lead: { companyName: "Map Co", email: "m@map-co.com", category: "Roofer" } })
      .expect(200);
    expect(fake.records.contacts.get(push.body.data.result.contactId)!.properties.jobtitle).toBe("Roofer");

    const reset = await t
      .request()
      .delete(`/api/v1/integrations/${id}/field-mapping`)
      .set(account.auth)
      .expect(200);
    expect(reset.body.data.mapping).toEqual({ contact: [], company: [] });
    const read = await t
      .request()
      .get(`/api/v1/integrations/${id}/field-mapping`)
      .set(account.auth)
      .expect(200);
    expect(read.body.data.mapping).toEqual({ contact: [], company: [] });
  });

  it("the dry run creates then deletes synthetic records and reports refused fields", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    await t
      .request()
      .patch(`/api/v1/integrations/${id}/field-mapping`)
      .set(account.auth)
      .send({
        mapping: {
          contact: [{ smbFieldId: "category", targetField: "lifecyclestage" }],
          company: [{ smbFieldId: "description", targetField: "industry_note" }],
        },
      })
      .expect(200);
    const liveBefore = fake.live("contacts").length + fake.live("companies").length;
    fake.refusedProperties.add("lifecyclestage");
    try {
      const res = await t
        .request()
        .post(`/api/v1/integrations/${id}/field-mapping/test`)
        .set(account.auth)
        .expect(200);
      expect(res.body.data.ok).toBe(false);
      const [contact, company] = res.body.data.scopes;
      expect(contact).toMatchObject({ scope: "contact", label: "Contacts", ok: false });
      expect(contact.issues).toEqual([
        {
          smbFieldId: "category",
          targetField: "lifecyclestage",
          message: expect.stringContaining("lifecyclestage"),
          severity: "error",
        },
      ]);
      expect(company).toMatchObject({ scope: "company", ok: true, issues: [] });
    } finally {
      fake.refusedProperties.clear();
    }
    expect(fake.live("contacts").length + fake.live("companies").length).toBe(liveBefore);
    const ok = await t
      .request()
      .post(`/api/v1/integrations/${id}/field-mapping/test`)
      .set(account.auth)
      .expect(200);
    expect(ok.body.data.ok).toBe(true);
  });

  it("answers 502 provider_error when the CRM fails, 400 on a webhook, 404 for another account", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    fake.failNext("/crm/v3/properties/", { status: 503, body: { status: "error", message: "down" } });
    const failed = await t
      .request()
      .get(`/api/v1/integrations/${id}/field-mapping?refresh=true`)
      .set(account.auth)
      .expect(502);
    expect(failed.body.error).toBe("provider_error");
    fake.failNext("/crm/v3/objects/contacts", {
      status: 429,
      headers: { "retry-after": "3" },
      body: { status: "error", message: "limit" },
    });
    const limited = await t
      .request()
      .post(`/api/v1/integrations/${id}/field-mapping/test`)
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
        targetUrl: "https://h.example.com/x",
        events: ["lead.created"],
      })
      .expect(201);
    const hookId = hook.body.data.integration.id;
    for (const [method, path] of [
      ["get", "field-mapping"],
      ["delete", "field-mapping"],
      ["post", "field-mapping/test"],
    ] as const) {
      const agent = t.request();
      const res = await agent[method](`/api/v1/integrations/${hookId}/${path}`).set(account.auth).expect(400);
      expect(res.body.error).toBe("bad_request");
    }
    const stranger = await buildAccount(t.ctx.db);
    for (const [method, path] of [
      ["get", "field-mapping"],
      ["delete", "field-mapping"],
      ["post", "field-mapping/test"],
      ["post", "test"],
    ] as const) {
      const agent = t.request();
      const res = await agent[method](`/api/v1/integrations/${id}/${path}`)
        .set(stranger.auth)
        .send({})
        .expect(404);
      expect(res.body.error).toBe("not_found");
    }
    const patch = await t
      .request()
      .patch(`/api/v1/integrations/${id}/field-mapping`)
      .set(stranger.auth)
      .send({ mapping: { contact: [] } })
      .expect(404);
    expect(patch.body.error).toBe("not_found");
  });

  it("needs a valid key of a paid account", async () => {
    await expectKeyAndPlanRequired(t, [
      { method: "get", path: "/api/v1/integrations/1/field-mapping" },
      { method: "delete", path: "/api/v1/integrations/1/field-mapping" },
      { method: "post", path: "/api/v1/integrations/1/field-mapping/test" },
    ]);
  });
});

describe("crm_contacts: revocation after delete", () => {
  it("deletes the refresh token at the CRM; an unknown one is done", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    const runtime = crmRuntime({ db: t.ctx.db, outbound: t.ctx.outbound, config: t.ctx.config });
    const stored = await t.ctx.db
      .selectFrom("crm_connections")
      .select("refresh_token")
      .where("integration_id", "=", id)
      .executeTakeFirstOrThrow();
    const refreshToken = runtime.cipher.decrypt(stored.refresh_token);
    await t.request().delete(`/api/v1/integrations/${id}`).set(account.auth).expect(200);
    const { rows } = await sql<{ payload: Record<string, unknown> }>`
      select j.payload from graphile_worker._private_jobs j
      join graphile_worker._private_tasks k on k.id = j.task_id
      where k.identifier = ${CRM_REVOKE_TASK}`.execute(t.ctx.db);
    const job = rows.find((r) => r.payload.integrationId === id)!;
    expect(await revokeDeleted(runtime, job.payload)).toBe("revoked");
    expect(fake.revoked).toContain(refreshToken);
    expect(await revokeDeleted(runtime, job.payload)).toBe("gone");
  });
});
