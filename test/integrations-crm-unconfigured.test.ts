import { describe, expect, it } from "vitest";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";

// No CRM configured (the default): the catalog says why, and every CRM route answers 503
// `provider_unavailable` without Retry-After.
const t = useTestApp();

describe("CRMs not configured", () => {
  it("lists the three CRMs unavailable with a reason", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t.request().get("/api/v1/integrations/providers").set(auth).expect(200);
    for (const id of ["crm_contacts", "crm_leads", "crm_deals"]) {
      const entry = res.body.data.find((p: { id: string }) => p.id === id);
      expect(entry).toMatchObject({ available: false, reason: "Not configured for this deployment." });
    }
  });

  it("answers 503 provider_unavailable on connect and on every route of a CRM integration", async () => {
    const account = await buildAccount(t.ctx.db);
    for (const provider of ["crm_contacts", "crm_leads", "crm_deals"]) {
      const res = await t
        .request()
        .post(`/api/v1/integrations/${provider}/connect`)
        .set(account.auth)
        .send({})
        .expect(503);
      expect(res.body.error).toBe("provider_unavailable");
      expect(res.headers["retry-after"]).toBeUndefined();
    }
    // An integration of a CRM this deployment no longer configures.
    const row = await t.ctx.db
      .insertInto("integrations")
      .values({
        account_id: account.accountId,
        provider: "crm_contacts",
        display_name: "Old CRM",
        target_url: null,
        signing_secret: "whsec_x",
        external_account_id: "1",
        metadata: "{}",
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    const id = row.id;
    const calls: [string, string, object?][] = [
      ["get", `/api/v1/integrations/${id}/field-mapping`],
      ["patch", `/api/v1/integrations/${id}/field-mapping`, { mapping: { contact: [] } }],
      ["delete", `/api/v1/integrations/${id}/field-mapping`],
      ["post", `/api/v1/integrations/${id}/field-mapping/test`],
      ["post", `/api/v1/integrations/${id}/test`, {}],
      ["post", `/api/v1/integrations/${id}/push-lead`, { lead: { companyName: "X" } }],
    ];
    for (const [method, path, body] of calls) {
      let req = t.request()[method as "get"](path).set(account.auth);
      if (body) req = req.send(body);
      const res = await req;
      expect(res.status, `${method} ${path}`).toBe(503);
      expect(res.body.error).toBe("provider_unavailable");
      expect(res.headers["retry-after"]).toBeUndefined();
    }
    const stranger = await buildAccount(t.ctx.db);
    const other = await t
      .request()
      .get(`/api/v1/integrations/${id}/field-mapping`)
      .set(stranger.auth)
      .expect(404);
    expect(other.body.error).toBe("not_found");
  });
});

describe("the deals CRM's routes when it is not configured", () => {
  it("answer 503 provider_unavailable on a crm_deals integration", async () => {
    const account = await buildAccount(t.ctx.db);
    const row = await t.ctx.db
      .insertInto("integrations")
      .values({
        account_id: account.accountId,
        provider: "crm_deals",
        display_name: "Old deals CRM",
        target_url: null,
        signing_secret: "whsec_x",
        external_account_id: "7",
        metadata: "{}",
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    for (const path of ["deals-crm/pipelines", "deals-crm/deal-fields"]) {
      const res = await t
        .request()
        .get(`/api/v1/integrations/${row.id}/${path}`)
        .set(account.auth)
        .expect(503);
      expect(res.body.error).toBe("provider_unavailable");
      expect(res.headers["retry-after"]).toBeUndefined();
    }
  });
});

describe("the OAuth callback without a state", () => {
  it("answers the 400 page", async () => {
    const res = await t.request().get("/api/v1/integrations/oauth/callback?code=abc");
    expect(res.status).toBe(400);
    expect(res.headers["content-type"]).toContain("text/html");
    expect(res.text).toContain("invalid_state");
  });
});
