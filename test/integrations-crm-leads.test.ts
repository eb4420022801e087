import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CrmConfig } from "../src/config.js";
import { useTestApp } from "./helpers/app.js";
import { crmOAuth, mailJobs as mailJobsOf } from "./helpers/crm-oauth.js";
import { CRM_REVOKE_TASK, revokeDeleted } from "../src/integrations/crm/revoke.js";
import { crmRuntime } from "../src/integrations/crm/runtime.js";
import { FakeLeadsCrm } from "./helpers/crm-leads-server.js";
import { hashApiKey } from "../src/auth/api-keys.js";
import { revokeKeyByHash } from "../src/auth/repository.js";
import { buildAccount, buildKey } from "./helpers/factories.js";
import { expectKeyAndPlanRequired } from "./helpers/lead-records-factories.js";
import { buildLead } from "./helpers/leads-factories.js";

const fake = new FakeLeadsCrm();
const crm: CrmConfig = {
  contacts: undefined,
  leads: { clientId: fake.clientId, clientSecret: fake.clientSecret, apiBase: "", authBase: "" },
  deals: undefined,
  tokenKeys: [randomBytes(32)],
};
beforeAll(async () => {
  await fake.start();
  crm.leads!.apiBase = "http://127.0.0.1:9";
  crm.leads!.authBase = fake.url;
  crm.leads!.sandboxAuthBase = `${fake.url}/sandbox`;
});
afterAll(() => fake.stop());
const t = useTestApp({ crm });

type Auth = { Authorization: string };
const { connectLink: requestLink, callback } = crmOAuth(t, "crm_leads", (link) => fake.issueCode(link));
const mailJobs = () => mailJobsOf(t);
const connectLink = (auth: Auth, environment?: "production" | "sandbox") =>
  requestLink(auth, environment ? { environment } : {});

async function connected(auth: Auth, environment?: "production" | "sandbox"): Promise<number> {
  const res = await callback((await connectLink(auth, environment)).authorizationUrl);
  expect(res.status, res.text).toBe(200);
  expect(res.text.replace(/<[^>]+>/g, " "), res.text).toContain("is connected");
  const list = await t.request().get("/api/v1/integrations").set(auth).expect(200);
  const wanted = environment ?? "production";
  return list.body.data.find(
    (i: { provider: string; metadata: { environment?: string } }) =>
      i.provider === "crm_leads" && i.metadata.environment === wanted,
  ).id as number;
}

async function push(auth: Auth, id: number, body: object) {
  const res = await t.request().post(`/api/v1/integrations/${id}/push-lead`).set(auth).send(body).expect(200);
  return res.body.data as { status: string; result: { leadId: string } | null; error: string | null };
}

describe("crm_leads: connect (production and sandbox, PKCE)", () => {
  it("links to the production login host with a PKCE challenge, and to the sandbox host on request", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const link = await connectLink(auth);
    expect(link.provider).toBe("crm_leads");
    const url = new URL(link.authorizationUrl);
    expect(`${url.origin}${url.pathname}`).toBe(`${fake.url}/services/oauth2/authorize`);
    expect(url.searchParams.get("response_type")).toBe("code");
    expect(url.searchParams.get("client_id")).toBe(fake.clientId);
    expect(url.searchParams.get("redirect_uri")).toBe(
      `${t.ctx.config.publicBaseUrl}/api/v1/integrations/oauth/callback`,
    );
    expect(url.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get("scope")).toContain("refresh_token");
    const stored = await t.ctx.db.selectFrom("crm_oauth_states").select("code_verifier").execute();
    expect(
      stored.every((s) => s.code_verifier === null || !link.authorizationUrl.includes(s.code_verifier)),
    ).toBe(true);
    const sandbox = new URL((await connectLink(auth, "sandbox")).authorizationUrl);
    expect(`${sandbox.origin}${sandbox.pathname}`).toBe(`${fake.url}/sandbox/services/oauth2/authorize`);
    const bad = await t
      .request()
      .post("/api/v1/integrations/crm_leads/connect")
      .set(auth)
      .send({ environment: "staging" })
      .expect(400);
    expect(bad.body.error).toBe("validation_error");
  });

  it("the callback exchanges the code with its verifier and creates one integration per environment", async () => {
    const account = await buildAccount(t.ctx.db);
    const prod = await connected(account.auth);
    const box = await connected(account.auth, "sandbox");
    expect(box).not.toBe(prod);
    const a = (await t.request().get(`/api/v1/integrations/${prod}`).set(account.auth).expect(200)).body.data;
    expect(a).toMatchObject({
      provider: "crm_leads",
      status: "connected",
      externalAccountId: fake.orgs.production,
      displayName: "Leads CRM (Example Co)",
      metadata: { environment: "production", instanceUrl: fake.url },
      dealSettings: null,
    });
    expect(
      a.subscriptions.map((s: { eventType: string; isActive: boolean }) => [s.eventType, s.isActive]),
    ).toEqual([["lead.created", true]]);
    expect(Date.parse(a.tokenExpiresAt)).toBeGreaterThan(Date.now() + 60 * 60_000);
    const b = (await t.request().get(`/api/v1/integrations/${box}`).set(account.auth).expect(200)).body.data;
    expect(b).toMatchObject({
      externalAccountId: fake.orgs.sandbox,
      displayName: "Leads CRM sandbox (Example Co (Sandbox))",
      metadata: { environment: "sandbox" },
    });
    const exchanges = fake.requests.filter((r) => r.path.endsWith("/services/oauth2/token"));
    expect(exchanges.some((r) => String(r.body).includes("code_verifier="))).toBe(true);
    expect(JSON.stringify(await mailJobs())).toContain(`Integration #${box}`);
  });

  it("a code exchanged without the link's verifier, or a refused code, connects nothing", async () => {
    const account = await buildAccount(t.ctx.db);
    const link = await connectLink(account.auth);
    // A code issued for another challenge: the verifier the service holds does not match it.
    const other = new URL(link.authorizationUrl);
    other.searchParams.set("code_challenge", "x".repeat(43));
    const res = await callback(link.authorizationUrl, fake.issueCode(other.toString()));
    expect(res.status).toBe(200);
    expect(res.text).toContain("provider_error");
    const refused = await callback((await connectLink(account.auth)).authorizationUrl, "nope");
    expect(refused.text).toContain("provider_error");
    const list = await t.request().get("/api/v1/integrations").set(account.auth).expect(200);
    expect(list.body.data).toHaveLength(0);
  });

  it("a link whose key was revoked since connect exchanges no code and connects nothing", async () => {
    const account = await buildAccount(t.ctx.db);
    const second = await buildKey(t.ctx.db, account.accountId);
    const link = await connectLink(second.auth, "sandbox");
    await revokeKeyByHash(t.ctx.db, hashApiKey(second.apiKey));
    const exchanges = () => fake.requests.filter((r) => r.path.endsWith("/services/oauth2/token")).length;
    const n = exchanges();
    const res = await callback(link.authorizationUrl);
    expect(res.status).toBe(400);
    expect(res.text).toContain("key_revoked");
    expect(exchanges()).toBe(n);
    const list = await t.request().get("/api/v1/integrations").set(account.auth).expect(200);
    expect(list.body.data).toHaveLength(0);
  });

  it("needs a valid key of a paid account", async () => {
    await expectKeyAndPlanRequired(t, [
      { method: "post", path: "/api/v1/integrations/crm_leads/connect", body: { environment: "sandbox" } },
    ]);
  });
});

describe("crm_leads: Leads", () => {
  it("updates the Lead of the same Email, creates a new Lead each time without e-mail, Company 'Unknown' when missing", async () => {
    const account = await buildAccount(t.ctx.db, { permanentCredits: 5 });
    const id = await connected(account.auth);
    const email = `sam-${randomBytes(3).toString("hex")}@sam-roofing.com`;
    const first = await push(account.auth, id, {
      lead: { companyName: "Sam Roofing", email, phone: "+1 512 555 0100", city: "Austin", zip: "78701" },
    });
    expect(first).toMatchObject({ status: "success", error: null, result: { leadId: expect.any(String) } });
    const leadId = first.result!.leadId;
    expect(fake.leads.get(leadId)!.fields).toMatchObject({
      LastName: "Sam Roofing",
      Company: "Sam Roofing",
      Email: email,
      Phone: "+1 512 555 0100",
      City: "Austin",
      PostalCode: "78701",
    });
    // The team renames the Lead; a later delivery of the same e-mail updates it and keeps the name.
    fake.leads.get(leadId)!.fields.LastName = "Sam Smith";
    const again = await push(account.auth, id, {
      lead: { companyName: "Sam Roofing LLC", email, city: "Dallas" },
    });
    expect(again.result).toEqual({ leadId });
    expect(fake.leads.get(leadId)!.fields).toMatchObject({
      LastName: "Sam Smith",
      Company: "Sam Roofing LLC",
      City: "Dallas",
    });

    const noEmail1 = await push(account.auth, id, { lead: { phone: "+1 512 555 0111" } });
    const noEmail2 = await push(account.auth, id, { lead: { phone: "+1 512 555 0111" } });
    expect(noEmail1.result!.leadId).not.toBe(noEmail2.result!.leadId);
    expect(fake.leads.get(noEmail1.result!.leadId)!.fields).toMatchObject({
      Company: "Unknown",
      LastName: "Unknown",
    });

    // A database lead by id (1 credit, tracked).
    const dbLead = await buildLead(t.ctx.db, { company_name: "Db Lead Co", email: `db-${email}` });
    const byId = await t
      .request()
      .post(`/api/v1/integrations/${id}/push-lead`)
      .set(account.auth)
      .send({ leadId: dbLead })
      .expect(200);
    expect(byId.body.data).toMatchObject({ status: "success", tracked: true, creditsUsed: 1 });
    expect(fake.leads.get(byId.body.data.result.leadId)!.fields).toMatchObject({ Company: "Db Lead Co" });

    const log = await t.request().get(`/api/v1/integrations/${id}/deliveries`).set(account.auth).expect(200);
    expect(log.body.data[0]).toMatchObject({
      targetUrl: "crm_leads://leads",
      status: "success",
      attemptCount: 1,
    });
  });

  it("test writes a real sample Lead that is not removed", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    const res = await t
      .request()
      .post(`/api/v1/integrations/${id}/test`)
      .set(account.auth)
      .send({})
      .expect(200);
    expect(res.body.data).toMatchObject({ status: "success", statusCode: 200, error: null });
    expect(fake.live().some((l) => l.fields.Email === "owner@sample-plumbing.example")).toBe(true);
  });

  it("answers a CRM failure in data.status, renews a refused session once, and a refused refresh needs attention", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth, "sandbox");
    fake.failNext("/services/data/v62.0/sobjects/Lead", {
      status: 503,
      body: [{ message: "Server unavailable", errorCode: "SERVER_UNAVAILABLE" }],
    });
    const failed = await push(account.auth, id, { lead: { companyName: "Down Co" } });
    expect(failed).toMatchObject({ status: "failed", result: null });
    expect(failed.error).toContain("HTTP 503");
    // One attempt: the client's own retries are off.
    expect(fake.failures).toHaveLength(0);

    const sandboxRefreshes = () =>
      fake.requests.filter((r) => r.path === "/sandbox/services/oauth2/token").length;
    const n = sandboxRefreshes();
    fake.accessTokens.clear();
    expect((await push(account.auth, id, { lead: { companyName: "Renewed Co" } })).status).toBe("success");
    expect(sandboxRefreshes()).toBe(n + 1);

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
      `Integration ${id} (Leads CRM) lost its authorization`,
    );
  });
});

describe("crm_leads: field mapping", () => {
  it("GET lists Lead, Contact and Account fields (writable ones), only the lead scope mapped", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    const res = await t
      .request()
      .get(`/api/v1/integrations/${id}/field-mapping`)
      .set(account.auth)
      .expect(200);
    const data = res.body.data;
    expect(data.mapping).toEqual({ lead: [] });
    const names = data.leadFields.map((f: { name: string }) => f.name);
    expect(names).toEqual(
      expect.arrayContaining(["LastName", "Company", "Email", "Industry", "Last_Signal__c"]),
    );
    for (const hidden of ["Id", "Address", "IsConverted", "OwnerId"]) expect(names).not.toContain(hidden);
    expect(data.leadFields.find((f: { name: string }) => f.name === "LastName")).toMatchObject({
      required: true,
    });
    expect(data.leadFields.find((f: { name: string }) => f.name === "City")).toMatchObject({
      required: false,
    });
    expect(data.contactFields.map((f: { name: string }) => f.name)).toContain("Email");
    expect(data.accountFields.map((f: { name: string }) => f.name)).toContain("Name");
    expect(data).not.toHaveProperty("personFields");
  });

  it("PATCH saves the lead scope (typed values on writes), refuses other scopes; the dry run reports refused fields and removes its Lead", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    const saved = await t
      .request()
      .patch(`/api/v1/integrations/${id}/field-mapping`)
      .set(account.auth)
      .send({
        mapping: {
          lead: [
            { smbFieldId: "category", targetField: "Industry" },
            { smbFieldId: "zip", targetField: "NumberOfEmployees" },
            { smbFieldId: "lastBuyingSignal", targetField: "Last_Signal__c" },
            { smbFieldId: "city", targetField: "OwnerId" },
          ],
        },
      })
      .expect(200);
    expect(saved.body.data.mapping.lead).toHaveLength(3);
    for (const mapping of [{ person: [] }, { contact: [] }]) {
      const res = await t
        .request()
        .patch(`/api/v1/integrations/${id}/field-mapping`)
        .set(account.auth)
        .send({ mapping })
        .expect(400);
      expect(res.body.error).toBe("validation_error");
    }
    const pushed = await push(account.auth, id, {
      lead: {
        companyName: "Typed Co",
        category: "Roofer",
        zip: "78701",
        lastBuyingSignal: "2026-10-05T12:00:00Z",
      },
    });
    expect(pushed.status).toBe("success");
    expect(fake.leads.get(pushed.result!.leadId)!.fields).toMatchObject({
      Industry: "Roofer",
      NumberOfEmployees: 78701,
      Last_Signal__c: "2026-10-05",
    });

    const before = fake.live().length;
    fake.refusedFields.add("Industry");
    try {
      const res = await t
        .request()
        .post(`/api/v1/integrations/${id}/field-mapping/test`)
        .set(account.auth)
        .expect(200);
      expect(res.body.data).toMatchObject({ ok: false });
      expect(res.body.data.scopes).toEqual([
        {
          scope: "lead",
          label: "Leads",
          ok: false,
          issues: [
            {
              smbFieldId: "category",
              targetField: "Industry",
              message: expect.stringContaining("restricted picklist"),
              severity: "error",
            },
          ],
        },
      ]);
    } finally {
      fake.refusedFields.clear();
    }
    const ok = await t
      .request()
      .post(`/api/v1/integrations/${id}/field-mapping/test`)
      .set(account.auth)
      .expect(200);
    expect(ok.body.data).toEqual({
      ok: true,
      scopes: [{ scope: "lead", label: "Leads", ok: true, issues: [] }],
    });
    expect(fake.live().length).toBe(before);
    expect(fake.requests.filter((r) => r.method === "DELETE").length).toBeGreaterThan(0);
  });

  it("answers 502 provider_error when the CRM fails, 400 on the deals routes, 404 across accounts", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth);
    fake.failNext("/services/data/v62.0/sobjects/Lead/describe", {
      status: 429,
      headers: { "retry-after": "5" },
      body: [{ message: "Too many requests", errorCode: "REQUEST_LIMIT_EXCEEDED" }],
    });
    const limited = await t
      .request()
      .get(`/api/v1/integrations/${id}/field-mapping?refresh=true`)
      .set(account.auth)
      .expect(502);
    expect(limited.body.error).toBe("provider_error");
    for (const path of ["deals-crm/pipelines", "deals-crm/deal-fields"]) {
      const res = await t.request().get(`/api/v1/integrations/${id}/${path}`).set(account.auth).expect(400);
      expect(res.body.error).toBe("bad_request");
    }
    const stranger = await buildAccount(t.ctx.db);
    for (const [method, path] of [
      ["get", "field-mapping"],
      ["post", "field-mapping/test"],
      ["post", "push-lead"],
    ] as const) {
      const agent = t.request();
      const res = await agent[method](`/api/v1/integrations/${id}/${path}`)
        .set(stranger.auth)
        .send({ lead: { companyName: "X" } })
        .expect(404);
      expect(res.body.error).toBe("not_found");
    }
  });
});

describe("crm_leads: revocation after delete", () => {
  it("revokes the refresh token at the login host of the integration's environment", async () => {
    const account = await buildAccount(t.ctx.db);
    const id = await connected(account.auth, "sandbox");
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
    expect(fake.requests.some((r) => r.path === "/sandbox/services/oauth2/revoke")).toBe(true);
  });
});
