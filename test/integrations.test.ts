import supertest from "supertest";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app/create-app.js";
import { hashApiKey } from "../src/auth/api-keys.js";
import { revokeKeyByHash } from "../src/auth/repository.js";
import { Outbound } from "../src/outbound/index.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount, buildKey } from "./helpers/factories.js";
import { expectKeyAndPlanRequired } from "./helpers/lead-records-factories.js";

const t = useTestApp();

type Auth = { Authorization: string };
type Account = Awaited<ReturnType<typeof buildAccount>>;
type IntegrationJson = {
  id: number;
  provider: string;
  status: string;
  displayName: string;
  targetUrl: string | null;
  hasApiKey: boolean;
  consecutiveFailures: number;
  lastChangedAt: string | null;
  lastChangedVia: unknown;
  createdVia: unknown;
  subscriptions: {
    id: number;
    eventType: string;
    targetUrl: string | null;
    isActive: boolean;
    config: object;
  }[];
};

let sequence = 0;
function webhook(overrides: Record<string, unknown> = {}) {
  sequence += 1;
  return {
    provider: "generic_webhook",
    displayName: `Hook ${sequence}`,
    targetUrl: `https://hooks.example.com/in/${sequence}`,
    events: ["lead.created"],
    ...overrides,
  };
}

async function create(auth: Auth, body: Record<string, unknown> = webhook()) {
  const res = await t.request().post("/api/v1/integrations/webhook").set(auth).send(body).expect(201);
  return res.body.data as { integration: IntegrationJson; signingSecret: string };
}

async function patch(auth: Auth, id: number, body: Record<string, unknown>, status = 200) {
  const res = await t.request().patch(`/api/v1/integrations/${id}`).set(auth).send(body).expect(status);
  return res.body;
}

async function listOf(auth: Auth) {
  const res = await t.request().get("/api/v1/integrations").set(auth).expect(200);
  return res.body.data as IntegrationJson[];
}

async function stored(id: number) {
  return t.ctx.db.selectFrom("integrations").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
}

async function countOf(accountId: number) {
  const row = await t.ctx.db
    .selectFrom("integrations")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("account_id", "=", accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function keyOf(account: Account) {
  return t.ctx.db
    .selectFrom("api_keys")
    .select(["id", "key_prefix", "name"])
    .where("account_id", "=", account.accountId)
    .executeTakeFirstOrThrow();
}

describe("GET /integrations/providers", () => {
  it("lists the nine providers; the CRMs are unavailable with a reason", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t.request().get("/api/v1/integrations/providers").set(auth).expect(200);
    const providers = res.body.data as Record<string, unknown>[];
    expect(providers.map((p) => p.id)).toEqual([
      "crm_contacts",
      "crm_leads",
      "crm_deals",
      "webhook_tool_a",
      "webhook_tool_b",
      "webhook_tool_c",
      "webhook_tool_d",
      "table_webhook",
      "generic_webhook",
    ]);
    for (const p of providers.slice(0, 3)) {
      expect(p).toMatchObject({ authMethod: "oauth2", available: false, reason: expect.any(String) });
      expect(p.defaultEvents).toEqual(["lead.created", "lead.updated"]);
    }
    for (const p of providers.slice(3)) {
      expect(p).toMatchObject({ authMethod: "hmac", available: true, supportsPerLeadPush: true });
      expect(p).not.toHaveProperty("reason");
      expect(p.defaultEvents).not.toContain("export.leads");
    }
  });
});

describe("POST /integrations/webhook", () => {
  it("creates a connected integration, shows the signing secret once and records the key", async () => {
    const account = await buildAccount(t.ctx.db);
    const key = await keyOf(account);
    const body = webhook({
      displayName: "  Orders  ",
      events: ["lead.created", "lead.updated", "lead.created"],
    });
    const res = await t
      .request()
      .post("/api/v1/integrations/webhook")
      .set(account.auth)
      .send(body)
      .expect(201);
    const { integration, signingSecret } = res.body.data as {
      integration: IntegrationJson;
      signingSecret: string;
    };
    expect(signingSecret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(integration).toEqual({
      id: expect.any(Number),
      provider: "generic_webhook",
      providerName: "Generic webhook",
      status: "connected",
      displayName: "Orders",
      externalAccountId: null,
      authMethod: "hmac",
      metadata: {},
      consecutiveFailures: 0,
      lastFailureAt: null,
      lastSuccessAt: null,
      tokenExpiresAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      createdVia: {
        channel: "api",
        apiKey: { id: key.id, keyPrefix: key.key_prefix, name: key.name, revoked: false },
      },
      lastChangedVia: null,
      lastChangedAt: null,
      subscriptions: [
        { id: expect.any(Number), eventType: "lead.created", targetUrl: null, isActive: true, config: {} },
        { id: expect.any(Number), eventType: "lead.updated", targetUrl: null, isActive: true, config: {} },
      ],
      targetUrl: body.targetUrl,
      hasApiKey: false,
      dealSettings: null,
    });
    const row = await stored(integration.id);
    expect(row.signing_secret).toBe(signingSecret);
    expect(row.api_key).toBeNull();
    expect(row.created_via).toEqual({ channel: "api", apiKeyId: key.id });

    // The secret is never answered again.
    const get = await t.request().get(`/api/v1/integrations/${integration.id}`).set(account.auth).expect(200);
    const list = await t.request().get("/api/v1/integrations").set(account.auth).expect(200);
    const patched = await patch(account.auth, integration.id, { displayName: "Renamed" });
    for (const answer of [get.body, list.body, patched]) {
      expect(JSON.stringify(answer)).not.toContain(signingSecret);
    }
    expect(get.body.data).toEqual(integration);
  });

  it("stores a header apiKey for the targetUrl and never returns it", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const apiKey = "hdr-secret-0123456789";
    const { integration } = await create(auth, webhook({ apiKey }));
    expect(integration.hasApiKey).toBe(true);
    const row = await stored(integration.id);
    expect(row.api_key).toBe(apiKey);
    expect(row.api_key_destinations).toEqual([integration.targetUrl]);
    const get = await t.request().get(`/api/v1/integrations/${integration.id}`).set(auth).expect(200);
    expect(JSON.stringify(get.body)).not.toContain(apiKey);
    expect(get.body.data.hasApiKey).toBe(true);
  });

  it("answers 409 integration_exists for the same provider and exact URL only", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const first = await create(auth);
    const again = await t
      .request()
      .post("/api/v1/integrations/webhook")
      .set(auth)
      .send(webhook({ targetUrl: first.integration.targetUrl }))
      .expect(409);
    expect(again.body.error).toBe("integration_exists");
    await create(auth, webhook({ targetUrl: `${first.integration.targetUrl}/` }));
    await create(auth, webhook({ provider: "webhook_tool_a", targetUrl: first.integration.targetUrl }));
    expect(await countOf(accountId)).toBe(3);
  });

  it("answers 409 integration_limit for a 26th integration", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    await insertIntegrations(accountId, 24);
    await create(auth);
    const res = await t.request().post("/api/v1/integrations/webhook").set(auth).send(webhook()).expect(409);
    expect(res.body.error).toBe("integration_limit");
    expect(await countOf(accountId)).toBe(25);
  });

  it("keeps both limits under concurrent creates", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    await insertIntegrations(accountId, 22);
    const sameUrl = webhook();
    const results = await Promise.all([
      ...Array.from({ length: 4 }, () =>
        t.request().post("/api/v1/integrations/webhook").set(auth).send(sameUrl),
      ),
      ...Array.from({ length: 4 }, () =>
        t.request().post("/api/v1/integrations/webhook").set(auth).send(webhook()),
      ),
    ]);
    const statuses = results.map((r) => (r.status === 201 ? 201 : r.body.error));
    expect(statuses.slice(0, 4).filter((s) => s === 201).length).toBeLessThanOrEqual(1);
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    expect(
      statuses.filter((s) => s !== 201 && s !== "integration_exists" && s !== "integration_limit"),
    ).toEqual([]);
    expect(await countOf(accountId)).toBe(25);
    const same = await t.ctx.db
      .selectFrom("integrations")
      .select("id")
      .where("target_url", "=", sameUrl.targetUrl)
      .execute();
    expect(same.length).toBeLessThanOrEqual(1);
  });

  it("refuses a blank name and table_webhook with export.leads with validation_error, storing nothing", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const blank = await t
      .request()
      .post("/api/v1/integrations/webhook")
      .set(auth)
      .send(webhook({ displayName: "   " }))
      .expect(400);
    expect(blank.body).toMatchObject({
      error: "validation_error",
      details: [{ path: ["body", "displayName"] }],
    });
    const table = await t
      .request()
      .post("/api/v1/integrations/webhook")
      .set(auth)
      .send(webhook({ provider: "table_webhook", events: ["lead.created", "export.leads"] }))
      .expect(400);
    expect(table.body).toMatchObject({
      error: "validation_error",
      details: [{ path: ["body", "events", "1"] }],
    });
    expect(await countOf(accountId)).toBe(0);
    await create(auth, webhook({ provider: "table_webhook", events: ["lead.created", "export.completed"] }));
  });

  it.each([
    ["a CRM provider", { provider: "crm_contacts" }],
    ["an unknown provider", { provider: "mailchimp" }],
    ["no events", { events: [] }],
    ["an unknown event", { events: ["lead.deleted"] }],
    ["events that are not a list", { events: "lead.created" }],
    ["a displayName over 100 characters", { displayName: "n".repeat(101) }],
    ["an empty displayName", { displayName: "" }],
    ["a displayName that is not a string", { displayName: 12 }],
    ["a URL that is not http(s)", { targetUrl: "ftp://hooks.example.com/x" }],
    ["a URL of 2,049 characters", { targetUrl: `https://hooks.example.com/${"a".repeat(2049 - 26)}` }],
    ["an apiKey over 500 characters", { apiKey: "k".repeat(501) }],
    ["an empty apiKey", { apiKey: "" }],
    ["a missing targetUrl", { targetUrl: undefined }],
  ])("refuses %s with 400 validation_error", async (_label, overrides) => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .post("/api/v1/integrations/webhook")
      .set(auth)
      .send(webhook(overrides))
      .expect(400);
    expect(res.body.error).toBe("validation_error");
    expect(await countOf(accountId)).toBe(0);
  });

  it("accepts a URL of exactly 2,048 characters", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const targetUrl = `https://hooks.example.com/${"a".repeat(2048 - 26)}`;
    expect(targetUrl).toHaveLength(2048);
    const { integration } = await create(auth, webhook({ targetUrl }));
    expect(integration.targetUrl).toBe(targetUrl);
  });

  it("refuses a URL with credentials with 400 bad_request", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .post("/api/v1/integrations/webhook")
      .set(auth)
      .send(webhook({ targetUrl: "https://user:pw@hooks.example.com/x" }))
      .expect(400);
    expect(res.body.error).toBe("bad_request");
    expect(res.body.message).toMatch(/user name or password/);
    expect(await countOf(accountId)).toBe(0);
  });
});

describe("GET /integrations and /integrations/{id}", () => {
  it("lists newest first and keeps accounts apart", async () => {
    const owner = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const first = await create(owner.auth);
    const second = await create(owner.auth);
    const theirs = await create(other.auth);
    expect((await listOf(owner.auth)).map((i) => i.id)).toEqual([
      second.integration.id,
      first.integration.id,
    ]);
    expect((await listOf(other.auth)).map((i) => i.id)).toEqual([theirs.integration.id]);
    const res = await t
      .request()
      .get(`/api/v1/integrations/${theirs.integration.id}`)
      .set(owner.auth)
      .expect(404);
    expect(res.body.error).toBe("not_found");
    await t.request().get("/api/v1/integrations/2147483647").set(owner.auth).expect(404);
    await t.request().get("/api/v1/integrations/abc").set(owner.auth).expect(400);
  });
});

describe("DELETE /integrations/{id}", () => {
  it("deletes the integration with its subscriptions and deliveries", async () => {
    const owner = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const { integration } = await create(owner.auth);
    await t.ctx.db
      .insertInto("integration_deliveries")
      .values({
        account_id: owner.accountId,
        integration_id: integration.id,
        subscription_id: integration.subscriptions[0]!.id,
        event_id: "evt_1_abc",
        event_type: "lead.created",
        occurred_at: new Date(),
        target_url: integration.targetUrl!,
        data: JSON.stringify({}),
        automatic: true,
      })
      .execute();
    const foreign = await t
      .request()
      .delete(`/api/v1/integrations/${integration.id}`)
      .set(other.auth)
      .expect(404);
    expect(foreign.body.error).toBe("not_found");
    const res = await t
      .request()
      .delete(`/api/v1/integrations/${integration.id}`)
      .set(owner.auth)
      .expect(200);
    expect(res.body.data.message).toEqual(expect.any(String));
    for (const table of ["integration_subscriptions", "integration_deliveries"] as const) {
      const left = await t.ctx.db
        .selectFrom(table)
        .select("id")
        .where("integration_id", "=", integration.id)
        .execute();
      expect(left, table).toEqual([]);
    }
    expect(await listOf(owner.auth)).toEqual([]);
    await t.request().delete(`/api/v1/integrations/${integration.id}`).set(owner.auth).expect(404);
  });
});

describe("PATCH /integrations/{id}", () => {
  it("changes only the fields sent and records who changed it", async () => {
    const account = await buildAccount(t.ctx.db);
    const second = await buildKey(t.ctx.db, account.accountId, "Automation key");
    const { integration } = await create(account.auth);
    const before = await stored(integration.id);
    const body = await patch(second.auth, integration.id, {
      displayName: "  Renamed  ",
    });
    expect(body.data).toMatchObject({
      displayName: "Renamed",
      status: "connected",
      targetUrl: integration.targetUrl,
      subscriptions: integration.subscriptions,
      createdVia: { apiKey: { id: (await keyOf(account)).id } },
      lastChangedVia: {
        channel: "api",
        apiKey: { id: second.keyId, name: "Automation key", revoked: false },
      },
      lastChangedAt: expect.any(String),
    });
    expect((await stored(integration.id)).revision).toBe(before.revision + 1);
  });

  it("answers an empty body with the integration unchanged", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const { integration } = await create(auth);
    const body = await patch(auth, integration.id, {});
    expect(body.data).toEqual(integration);
  });

  it("pauses and resumes; connected resets consecutiveFailures", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const { integration } = await create(auth);
    expect((await patch(auth, integration.id, { status: "disabled" })).data.status).toBe("disabled");
    await t.ctx.db
      .updateTable("integrations")
      .set({ status: "needs_attention", consecutive_failures: 5, last_failure_at: new Date() })
      .where("id", "=", integration.id)
      .execute();
    const resumed = (await patch(auth, integration.id, { status: "connected" })).data;
    expect(resumed).toMatchObject({
      status: "connected",
      consecutiveFailures: 0,
      lastFailureAt: expect.any(String),
    });
  });

  it("takes needs_attention only as a no-op", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const { integration } = await create(auth);
    const refused = await patch(auth, integration.id, { status: "needs_attention" }, 400);
    expect(refused.error).toBe("validation_error");
    await t.ctx.db
      .updateTable("integrations")
      .set({ status: "needs_attention" })
      .where("id", "=", integration.id)
      .execute();
    const noop = (await patch(auth, integration.id, { status: "needs_attention" })).data;
    expect(noop).toMatchObject({ status: "needs_attention", lastChangedAt: null });
  });

  it("replaces the subscriptions, merging duplicates (the later wins) and keeping ids", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const { integration } = await create(auth, webhook({ events: ["lead.created", "lead.updated"] }));
    const created = integration.subscriptions.find((s) => s.eventType === "lead.created")!;
    const other = "https://other.example.org/hook";
    const { data } = await patch(auth, integration.id, {
      subscriptions: [
        { eventType: "lead.created" },
        { eventType: "export.completed", targetUrl: other, config: { note: "x" } },
        { eventType: "lead.created", targetUrl: null, isActive: false },
      ],
    });
    expect(data.subscriptions).toEqual([
      { id: created.id, eventType: "lead.created", targetUrl: null, isActive: false, config: {} },
      {
        id: expect.any(Number),
        eventType: "export.completed",
        targetUrl: other,
        isActive: true,
        config: { note: "x" },
      },
    ]);
  });

  it("refuses more than 20 subscriptions after merging, and export.leads on table_webhook", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const { integration } = await create(auth);
    const many = Array.from({ length: 21 }, (_, i) => ({
      eventType: "lead.created",
      targetUrl: `https://h.example.com/${i}`,
    }));
    const tooMany = await patch(auth, integration.id, { subscriptions: many }, 400);
    expect(tooMany).toMatchObject({
      error: "validation_error",
      details: [{ path: ["body", "subscriptions"] }],
    });
    const merged = [...many.slice(0, 20), many[0]];
    expect((await patch(auth, integration.id, { subscriptions: merged })).data.subscriptions).toHaveLength(
      20,
    );

    const table = await create(auth, webhook({ provider: "table_webhook" }));
    const refused = await patch(
      auth,
      table.integration.id,
      { subscriptions: [{ eventType: "export.leads" }] },
      400,
    );
    expect(refused).toMatchObject({
      error: "validation_error",
      details: [{ path: ["body", "subscriptions", "0", "eventType"] }],
    });
  });

  it("re-points every subscription with defaultTargetUrl; 409 when the provider already uses it", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const { integration } = await create(auth, webhook({ events: ["lead.created", "lead.updated"] }));
    await patch(auth, integration.id, {
      subscriptions: [
        { eventType: "lead.created", targetUrl: "https://a.example.com/x" },
        { eventType: "lead.updated" },
      ],
    });
    const taken = await create(auth);
    const sameOtherProvider = await create(auth, webhook({ provider: "webhook_tool_b" }));
    const conflict = await patch(
      auth,
      integration.id,
      { defaultTargetUrl: taken.integration.targetUrl },
      409,
    );
    expect(conflict.error).toBe("integration_exists");
    expect((await stored(integration.id)).target_url).toBe(integration.targetUrl);

    const { data } = await patch(auth, integration.id, {
      defaultTargetUrl: sameOtherProvider.integration.targetUrl,
    });
    expect(data.targetUrl).toBe(sameOtherProvider.integration.targetUrl);
    expect(data.subscriptions.map((s: { targetUrl: string | null }) => s.targetUrl)).toEqual([null, null]);
  });

  it("needs apiKey in the same request to re-point an integration with a header API key", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const { integration } = await create(auth, webhook({ apiKey: "first-key" }));
    const newUrl = "https://moved.example.com/in";
    const refused = await patch(auth, integration.id, { defaultTargetUrl: newUrl }, 400);
    expect(refused.error).toBe("bad_request");
    expect(refused.message).toMatch(/apiKey in the same request/);
    const sub = await patch(
      auth,
      integration.id,
      { subscriptions: [{ eventType: "lead.created", targetUrl: newUrl }] },
      400,
    );
    expect(sub.error).toBe("bad_request");
    expect((await stored(integration.id)).target_url).toBe(integration.targetUrl);

    // The destination it was set for needs nothing more.
    await patch(auth, integration.id, {
      subscriptions: [{ eventType: "lead.created", targetUrl: integration.targetUrl }],
    });
    // With the key (again), the re-point is taken and the key follows it.
    const moved = (await patch(auth, integration.id, { defaultTargetUrl: newUrl, apiKey: "second-key" }))
      .data;
    expect(moved).toMatchObject({ targetUrl: newUrl, hasApiKey: true });
    let row = await stored(integration.id);
    expect(row.api_key).toBe("second-key");
    expect(row.api_key_destinations).toEqual([newUrl]);
    expect(JSON.stringify(moved)).not.toContain("second-key");

    // null removes it; then any destination goes without a key.
    expect((await patch(auth, integration.id, { apiKey: null })).data.hasApiKey).toBe(false);
    await patch(auth, integration.id, { defaultTargetUrl: "https://third.example.com/in" });
    row = await stored(integration.id);
    expect(row.api_key).toBeNull();
    expect(row.api_key_destinations).toEqual([]);

    // Setting a key alone covers every destination the integration has.
    await patch(auth, integration.id, {
      subscriptions: [
        { eventType: "lead.created" },
        { eventType: "lead.updated", targetUrl: "https://s.example.com/u" },
      ],
      apiKey: "third-key",
    });
    expect((await stored(integration.id)).api_key_destinations.sort()).toEqual(
      ["https://s.example.com/u", "https://third.example.com/in"].sort(),
    );
  });

  it("refuses CRM-only fields on a webhook and blank names", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const { integration } = await create(auth);
    const deal = await patch(auth, integration.id, { dealSettings: { createDeals: true } }, 400);
    expect(deal.error).toBe("bad_request");
    const blank = await patch(auth, integration.id, { displayName: " " }, 400);
    expect(blank.error).toBe("validation_error");
    expect((await stored(integration.id)).revision).toBe(1);
  });

  it.each([
    ["an unknown status", { status: "paused" }],
    ["subscriptions that are not a list", { subscriptions: { eventType: "lead.created" } }],
    ["a subscription without eventType", { subscriptions: [{ isActive: true }] }],
    ["a defaultTargetUrl that is not http(s)", { defaultTargetUrl: "javascript:alert(1)" }],
    [
      "a defaultTargetUrl of 2,049 characters",
      { defaultTargetUrl: `https://h.example.com/${"a".repeat(2027)}` },
    ],
    ["an empty apiKey", { apiKey: "" }],
    ["a displayName over 100 characters", { displayName: "x".repeat(101) }],
  ])("refuses %s with 400 validation_error", async (_label, body) => {
    const { auth } = await buildAccount(t.ctx.db);
    const { integration } = await create(auth);
    const res = await patch(auth, integration.id, body, 400);
    expect(res.error).toBe("validation_error");
    expect((await stored(integration.id)).revision).toBe(1);
  });

  it("applies the CRM rules to CRM integrations (written directly: no CRM is connectable yet)", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const [contacts, deals] = await t.ctx.db
      .insertInto("integrations")
      .values(
        (["crm_contacts", "crm_deals"] as const).map((provider) => ({
          account_id: accountId,
          provider,
          display_name: provider,
          target_url: null,
          signing_secret: "unused",
        })),
      )
      .returning("id")
      .execute();
    const events = await patch(
      auth,
      contacts!.id,
      { subscriptions: [{ eventType: "export.completed" }] },
      400,
    );
    expect(events).toMatchObject({
      error: "validation_error",
      details: [{ path: ["body", "subscriptions", "0", "eventType"] }],
    });
    for (const body of [
      { defaultTargetUrl: "https://crm.example.com/x" },
      { apiKey: "k" },
      { subscriptions: [{ eventType: "lead.created", targetUrl: "https://crm.example.com/x" }] },
      { dealSettings: { createDeals: true } },
    ]) {
      expect((await patch(auth, contacts!.id, body, 400)).error).toBe("bad_request");
    }
    const ok = (await patch(auth, contacts!.id, { subscriptions: [{ eventType: "lead.updated" }] })).data;
    expect(ok).toMatchObject({
      authMethod: "oauth2",
      providerName: "Contacts CRM",
      targetUrl: null,
      dealSettings: null,
    });
    const dealt = (await patch(auth, deals!.id, { dealSettings: { createDeals: true, pipelineId: 7 } })).data;
    expect(dealt.dealSettings).toEqual({ createDeals: true, pipelineId: 7, stageId: null });
    const staged = (await patch(auth, deals!.id, { dealSettings: { stageId: 3 } })).data;
    expect(staged.dealSettings).toEqual({ createDeals: true, pipelineId: 7, stageId: 3 });
  });

  it("answers 404 for another account's integration and changes nothing", async () => {
    const owner = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const { integration } = await create(owner.auth);
    const res = await patch(other.auth, integration.id, { displayName: "Mine now" }, 404);
    expect(res.error).toBe("not_found");
    expect((await stored(integration.id)).display_name).toBe(integration.displayName);
  });
});

describe("the PATCH conflict rule", () => {
  /** A transaction of its own on a pool client, held open by the test. */
  async function openTransaction(sqlText: string, params: unknown[]) {
    const client = await t.ctx.pool.connect();
    await client.query("begin");
    await client.query(sqlText, params);
    return {
      client,
      async commit() {
        await client.query("commit");
        client.release();
      },
    };
  }

  /**
   * Waits until a backend of this file's database runs a statement starting with `prefix` and waits
   * on a lock (other files' databases share the server; read on the pool: inside a transaction
   * pg_stat_activity is a snapshot).
   */
  async function waitUntilBlocked(prefix: string) {
    for (let i = 0; i < 3_000; i += 1) {
      const { rows } = await t.ctx.pool.query<{ n: string }>(
        `select count(*) as n from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock' and starts_with(query, $1)`,
        [prefix],
      );
      if (Number(rows[0]!.n) >= 1) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no backend blocked on "${prefix}"`);
  }

  const CONCURRENT =
    "/* concurrent */ update integrations set display_name = $2, revision = revision + 1 where id = $1";

  it("applies the update again on top of one concurrent change", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const { integration } = await create(auth);
    const concurrent = await openTransaction(CONCURRENT, [integration.id, "Changed meanwhile"]);
    const request = patch(auth, integration.id, { status: "disabled" });
    await waitUntilBlocked('update "integrations"');
    await concurrent.commit();
    const { data } = await request;
    expect(data).toMatchObject({ status: "disabled", displayName: "Changed meanwhile" });
    expect((await stored(integration.id)).revision).toBe(3);
  });

  it("answers 409 conflict with nothing changed when it changes again", async () => {
    // The gate below takes the caller's key when the PATCH's first try ends; the PATCH's second
    // try asks for the same key a few round trips later. On a loaded machine the gate's backend
    // may wake after that, and the second try then simply succeeds (a valid outcome, not the one
    // under test): the scenario is run again, on a new integration, until the gate wins.
    for (let round = 1; ; round += 1) {
      const account = await buildAccount(t.ctx.db);
      const { integration } = await create(account.auth);
      const key = await keyOf(account);
      const first = await openTransaction(CONCURRENT, [integration.id, "First"]);
      const request = t
        .request()
        .patch(`/api/v1/integrations/${integration.id}`)
        .set(account.auth)
        .send({ status: "disabled", displayName: "Mine" })
        .then((res) => res);
      await waitUntilBlocked('update "integrations"');
      // The gate: a transaction that waits for the PATCH's first try to end (the try holds the
      // caller's key with a share lock), then holds the key so the second try waits for it after
      // its fresh read, and changes the integration once more meanwhile.
      const gate = await t.ctx.pool.connect();
      await gate.query("begin");
      const gateLock = gate.query("/* gate */ select id from api_keys where id = $1 for update", [key.id]);
      await waitUntilBlocked("/* gate */");
      await first.commit();
      const winner = await Promise.race([gateLock.then(() => "gate"), request.then(() => "patch")]);
      if (winner === "patch" && round < 5) {
        // The second try took the key first: it applied the change on the fresh read.
        expect((await request).status).toBe(200);
        await gateLock;
        await gate.query("rollback");
        gate.release();
        continue;
      }
      await gate.query(CONCURRENT, [integration.id, "Second"]);
      await waitUntilBlocked('select "revoked_at" from "api_keys"');
      await gate.query("commit");
      gate.release();
      const res = await request;
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ error: "conflict", message: expect.any(String) });
      const row = await stored(integration.id);
      expect(row).toMatchObject({
        status: "connected",
        display_name: "Second",
        revision: 3,
        last_changed_at: null,
      });
      return;
    }
  });

  it("answers 401 with nothing applied when the key is revoked meanwhile", async () => {
    const account = await buildAccount(t.ctx.db);
    const { integration } = await create(account.auth);
    const key = await keyOf(account);
    const revoke = await openTransaction("update api_keys set revoked_at = now() where id = $1", [key.id]);
    const request = patch(account.auth, integration.id, { status: "disabled" }, 401);
    await waitUntilBlocked('select "revoked_at" from "api_keys"');
    await revoke.commit();
    const res = await request;
    expect(res.error).toBe("unauthorized");
    expect(await stored(integration.id)).toMatchObject({
      status: "connected",
      revision: 1,
      last_changed_at: null,
    });
  });
});

describe("private destinations (outbound guard on)", () => {
  let guarded: () => supertest.Agent;
  beforeAll(() => {
    const resolve = async (host: string) => {
      if (host === "rebind.example.com") return ["127.0.0.1"];
      if (host === "public.example.com") return ["93.184.216.34"];
      throw new Error("ENOTFOUND");
    };
    const app = createApp({ ...t.ctx, outbound: new Outbound({ allowPrivate: false, resolve }) });
    guarded = () => supertest.agent(app);
  });

  it.each([
    "http://127.0.0.1/hook",
    "http://10.0.0.1/hook",
    "http://169.254.169.254/latest/meta-data",
    "https://rebind.example.com/hook",
    "https://nowhere.example.com/hook",
  ])("refuses %s with 400 bad_request at create and PATCH, storing nothing", async (url) => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const res = await guarded()
      .post("/api/v1/integrations/webhook")
      .set(auth)
      .send(webhook({ targetUrl: url }))
      .expect(400);
    expect(res.body.error).toBe("bad_request");
    expect(res.body.message).toMatch(/refused/);
    expect(await countOf(accountId)).toBe(0);

    const ok = await guarded()
      .post("/api/v1/integrations/webhook")
      .set(auth)
      .send(webhook({ targetUrl: "https://public.example.com/hook" }))
      .expect(201);
    const id = ok.body.data.integration.id as number;
    for (const body of [
      { defaultTargetUrl: url },
      { subscriptions: [{ eventType: "lead.created", targetUrl: url }] },
    ]) {
      const refused = await guarded().patch(`/api/v1/integrations/${id}`).set(auth).send(body).expect(400);
      expect(refused.body.error).toBe("bad_request");
    }
    const row = await stored(id);
    expect(row).toMatchObject({ target_url: "https://public.example.com/hook", revision: 1 });
  });
});

describe("owner notices", () => {
  it("queues a mail with the host only for a change that adds something, none for a rename", async () => {
    const account = await buildAccount(t.ctx.db);
    const { integration } = await create(
      account.auth,
      webhook({ targetUrl: "https://notify.example.com/private/path?token=abc" }),
    );
    await patch(account.auth, integration.id, { displayName: "Quiet rename" });
    const notices = await t.ctx.db
      .selectFrom("integration_change_notices")
      .selectAll()
      .where("account_id", "=", account.accountId)
      .execute();
    expect(notices).toHaveLength(1);
    expect(notices[0]!.mailed_at).not.toBeNull();
    expect(notices[0]!.summary).toContain("notify.example.com");
    expect(notices[0]!.summary).not.toContain("/private/path");
    expect(notices[0]!.summary).not.toContain("token=abc");
  });
});

describe("keys and plans", () => {
  it("needs a valid, unrevoked key of an account with a paid plan", async () => {
    const owner = await buildAccount(t.ctx.db);
    const { integration } = await create(owner.auth);
    await expectKeyAndPlanRequired(t, [
      { method: "get", path: "/api/v1/integrations/providers" },
      { method: "get", path: "/api/v1/integrations" },
      { method: "get", path: `/api/v1/integrations/${integration.id}` },
      { method: "post", path: "/api/v1/integrations/webhook", body: webhook() },
      { method: "delete", path: `/api/v1/integrations/${integration.id}` },
    ]);
    // The shared helper has no PATCH: the same four cases here.
    const revoked = await buildAccount(t.ctx.db);
    await revokeKeyByHash(t.ctx.db, hashApiKey(revoked.apiKey));
    const canceled = await buildAccount(t.ctx.db, { status: "canceled" });
    for (const [headers, status, error] of [
      [{}, 401, "unauthorized"],
      [{ Authorization: `Bearer svck_${"x".repeat(40)}` }, 401, "unauthorized"],
      [revoked.auth, 401, "unauthorized"],
      [canceled.auth, 403, "forbidden"],
    ] as const) {
      const res = await t
        .request()
        .patch(`/api/v1/integrations/${integration.id}`)
        .set(headers)
        .send({ displayName: "x" })
        .expect(status);
      expect(res.body.error).toBe(error);
    }
    expect((await stored(integration.id)).display_name).toBe(integration.displayName);
  });
});

/** Integrations written directly (to reach the limit without 25 requests). */
async function insertIntegrations(accountId: number, count: number) {
  await t.ctx.db
    .insertInto("integrations")
    .values(
      Array.from({ length: count }, (_, i) => ({
        account_id: accountId,
        provider: "generic_webhook",
        display_name: `Filler ${i}`,
        target_url: `https://filler.example.com/${accountId}/${i}`,
        signing_secret: "whsec_filler",
      })),
    )
    .execute();
}
