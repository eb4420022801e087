import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SESSION_LIFETIME_MS } from "../src/auth/sessions/cookie.js";
import { insertSession } from "../src/auth/sessions/repository.js";
import { csrfTokenFor, hashToken, newToken } from "../src/auth/sessions/tokens.js";
import type { CrmConfig } from "../src/config.js";
import { useTestApp } from "./helpers/app.js";
import { crmOAuth, mailJobs, redirectOf } from "./helpers/crm-oauth.js";
import { FakeContactsCrm } from "./helpers/crm-contacts-server.js";
import { buildAccount } from "./helpers/factories.js";

// Connecting a CRM from the dashboard (docs/dashboard.md): the connect link is bound to the
// session that asked for it instead of an API key; the callback connects only while that session
// is live, and records the integration as made in the dashboard.
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
const { callback } = crmOAuth(t, "crm_contacts", (link) => fake.issueCode(redirectOf(link)));

/** A live dashboard session of a new account: its cookie and CSRF headers. */
async function session() {
  const account = await buildAccount(t.ctx.db);
  const token = newToken();
  const hash = hashToken(token);
  const sessionId = await insertSession(t.ctx.db, {
    accountId: account.accountId,
    tokenHash: hash,
    expiresAt: new Date(Date.now() + SESSION_LIFETIME_MS),
  });
  return {
    ...account,
    sessionId,
    headers: { Cookie: `svc_session=${token}`, "X-CSRF-Token": csrfTokenFor(t.ctx.signingSecret, hash) },
  };
}

async function connectFrom(headers: Record<string, string>) {
  const res = await t.request().post("/api/v1/integrations/crm_contacts/connect").set(headers).send({});
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as { authorizationUrl: string };
}

const crmIntegrations = (accountId: number) =>
  t.ctx.db
    .selectFrom("integrations")
    .select(["id", "created_via"])
    .where("account_id", "=", accountId)
    .where("provider", "=", "crm_contacts")
    .execute();

describe("connecting a CRM from a dashboard session", () => {
  it("binds the link to the session and connects, recorded as made in the dashboard", async () => {
    const s = await session();
    const link = await connectFrom(s.headers);
    const states = await t.ctx.db
      .selectFrom("crm_oauth_states")
      .select(["api_key_id", "session_id"])
      .where("account_id", "=", s.accountId)
      .execute();
    expect(states).toEqual([{ api_key_id: null, session_id: Number(s.sessionId) }]);

    const page = await callback(link.authorizationUrl);
    expect(page.status).toBe(200);
    expect(page.text).toContain("is connected");
    const [integration] = await crmIntegrations(s.accountId);
    expect(integration?.created_via).toEqual({ channel: "dashboard", apiKeyId: null });
    const answer = await t.request().get(`/api/v1/integrations/${integration!.id}`).set(s.auth).expect(200);
    expect(answer.body.data.createdVia).toEqual({ channel: "dashboard", apiKey: null });
    // The owner's change notice says it was made in the dashboard.
    const notices = await t.ctx.db
      .selectFrom("integration_change_notices")
      .selectAll()
      .where("account_id", "=", s.accountId)
      .execute();
    expect(JSON.stringify(notices)).toContain("in the dashboard.");
    expect((await mailJobs(t)).length).toBeGreaterThan(0);
  });

  it("connects nothing when the session was signed out before the callback", async () => {
    const s = await session();
    const link = await connectFrom(s.headers);
    await t.request().delete("/api/v1/auth/session").set(s.headers).expect(200);
    const page = await callback(link.authorizationUrl);
    expect(page.status).toBe(400);
    expect(page.text).toContain("session_ended");
    expect(await crmIntegrations(s.accountId)).toEqual([]);
    // The link was used up: a second try is the invalid-state page.
    expect((await callback(link.authorizationUrl)).status).toBe(400);
  });

  it("connects nothing when the session expired before the callback", async () => {
    const s = await session();
    const link = await connectFrom(s.headers);
    await t.ctx.db
      .updateTable("dashboard_sessions")
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where("id", "=", s.sessionId)
      .execute();
    const page = await callback(link.authorizationUrl);
    expect(page.status).toBe(400);
    expect(page.text).toContain("session_ended");
    expect(await crmIntegrations(s.accountId)).toEqual([]);
  });

  it("refuses a connect without the session's CSRF token (403), storing no link", async () => {
    const s = await session();
    const res = await t
      .request()
      .post("/api/v1/integrations/crm_contacts/connect")
      .set({ Cookie: s.headers.Cookie })
      .send({});
    expect([res.status, res.body.error]).toEqual([403, "forbidden"]);
    const states = await t.ctx.db
      .selectFrom("crm_oauth_states")
      .select("state_hash")
      .where("account_id", "=", s.accountId)
      .execute();
    expect(states).toEqual([]);
  });

  it("keeps a key's link bound to the key (no session id)", async () => {
    const s = await session();
    await t.request().post("/api/v1/integrations/crm_contacts/connect").set(s.auth).send({}).expect(200);
    const states = await t.ctx.db
      .selectFrom("crm_oauth_states")
      .select(["api_key_id", "session_id"])
      .where("account_id", "=", s.accountId)
      .execute();
    expect(states).toEqual([{ api_key_id: expect.any(Number), session_id: null }]);
  });
});
