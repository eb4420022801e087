import { Writable } from "node:stream";
import { pino } from "pino";
import supertest from "supertest";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/app/create-app.js";
import { REDACTED_PATHS } from "../src/lib/logger.js";
import { clearedSessionCookie, sessionCookie } from "../src/auth/sessions/cookie.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { mailsTo, tokenOf, useMailRunner, waitForSignInLink } from "./helpers/dashboard-sign-in.js";

// Behind a trusted proxy, so each test call can come from its own client IP (the per-IP limits).
const t = useTestApp({ trustProxy: true });
useMailRunner(t);

let ipSequence = 0;
/** A client IP of its own for one call. */
function fresh(): { "X-Forwarded-For": string } {
  ipSequence += 1;
  return { "X-Forwarded-For": `10.9.${ipSequence >> 8}.${ipSequence & 255}` };
}

const SENT = "If the address has an account, a sign-in link valid for 15 minutes is on its way.";

/** Asks for a link for the account's address and takes it from the mail the service wrote. */
async function linkFor(email: string): Promise<string> {
  const known = (await mailsTo(t.ctx.config.dataDir, email)).length;
  await t.request().post("/api/v1/auth/sign-in-links").set(fresh()).send({ email }).expect(202);
  return waitForSignInLink(t.ctx.config.dataDir, email, known);
}

/** A signed-in session of a new account: its cookie header, CSRF token and the account. */
async function signedIn(overrides: Parameters<typeof buildAccount>[1] = {}) {
  const account = await buildAccount(t.ctx.db, overrides);
  const email = await emailOf(account.accountId);
  const res = await t
    .request()
    .post("/api/v1/auth/sessions")
    .set(fresh())
    .send({ token: tokenOf(await linkFor(email)) })
    .expect(201);
  const cookie = String(res.headers["set-cookie"]).split(";")[0]!;
  return {
    ...account,
    email,
    cookie: { Cookie: cookie },
    csrf: { "X-CSRF-Token": res.body.data.csrfToken as string },
  };
}

async function emailOf(accountId: number): Promise<string> {
  const row = await t.ctx.db
    .selectFrom("accounts")
    .select("email")
    .where("id", "=", accountId)
    .executeTakeFirstOrThrow();
  return row.email;
}

describe("sign-in links", () => {
  it("answers the same with or without an account, and mails a link only to an account", async () => {
    const { accountId } = await buildAccount(t.ctx.db);
    const email = await emailOf(accountId);
    const known = await t
      .request()
      .post("/api/v1/auth/sign-in-links")
      .set(fresh())
      .send({ email: email.toUpperCase() })
      .expect(202);
    const unknown = await t
      .request()
      .post("/api/v1/auth/sign-in-links")
      .set(fresh())
      .send({ email: "nobody-here@example.com" })
      .expect(202);
    expect(known.body).toEqual({ data: { message: SENT } });
    expect(unknown.body).toEqual(known.body);
    const link = await waitForSignInLink(t.ctx.config.dataDir, email);
    expect(link).toMatch(new RegExp(`^${t.ctx.config.publicBaseUrl}/sign-in#token=[A-Za-z0-9_-]{43}$`));
    // Only the token's hash is stored.
    const rows = await t.ctx.db
      .selectFrom("dashboard_sign_in_links")
      .selectAll()
      .where("account_id", "=", accountId)
      .execute();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(tokenOf(link));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await mailsTo(t.ctx.config.dataDir, "nobody-here@example.com")).toEqual([]);
  });

  it("refuses a bad address with 400 validation_error", async () => {
    for (const body of [{}, { email: "no-at-sign" }, { email: 7 }, { email: "a b@c.d" }]) {
      const res = await t.request().post("/api/v1/auth/sign-in-links").set(fresh()).send(body).expect(400);
      expect(res.body.error).toBe("validation_error");
    }
  });

  it("limits links to 20 per hour per IP", async () => {
    const ip = { "X-Forwarded-For": "10.8.0.1" };
    for (let i = 0; i < 20; i += 1) {
      await t
        .request()
        .post("/api/v1/auth/sign-in-links")
        .set(ip)
        .send({ email: `ip${i}@example.com` })
        .expect(202);
    }
    const res = await t
      .request()
      .post("/api/v1/auth/sign-in-links")
      .set(ip)
      .send({ email: "ip-last@example.com" })
      .expect(429);
    expect(res.body.message).toContain("per IP");
    await t
      .request()
      .post("/api/v1/auth/sign-in-links")
      .set(fresh())
      .send({ email: "ip-last@example.com" })
      .expect(202);
  });

  it("limits links to 5 per hour per address, with or without an account", async () => {
    const { accountId } = await buildAccount(t.ctx.db);
    for (const email of [await emailOf(accountId), "limit-nobody@example.com"]) {
      for (let i = 0; i < 5; i += 1) {
        await t.request().post("/api/v1/auth/sign-in-links").set(fresh()).send({ email }).expect(202);
      }
      const res = await t
        .request()
        .post("/api/v1/auth/sign-in-links")
        .set(fresh())
        .send({ email })
        .expect(429);
      expect(res.body).toMatchObject({ error: "Rate limit exceeded", retryAfter: expect.any(Number) });
      expect(res.headers["retry-after"]).toBeDefined();
    }
  });
});

describe("signing in with a link", () => {
  it("sets an HttpOnly SameSite=Lax session cookie (not Secure over http) and works once", async () => {
    const { accountId } = await buildAccount(t.ctx.db);
    const email = await emailOf(accountId);
    const token = tokenOf(await linkFor(email));
    const res = await t.request().post("/api/v1/auth/sessions").set(fresh()).send({ token }).expect(201);
    expect(res.body.data).toEqual({
      accountId,
      email,
      expiresAt: expect.any(String),
      csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    const cookie = String(res.headers["set-cookie"]);
    expect(cookie).toMatch(
      /^svc_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800$/,
    );
    const again = await t.request().post("/api/v1/auth/sessions").set(fresh()).send({ token }).expect(401);
    expect(again.body).toEqual({ error: "sign_in_link_invalid", message: expect.any(String) });
    // Only the session token's hash is stored.
    const sessions = await t.ctx.db
      .selectFrom("dashboard_sessions")
      .selectAll()
      .where("account_id", "=", accountId)
      .execute();
    expect(sessions).toHaveLength(1);
    expect(JSON.stringify(sessions)).not.toContain(cookie.split(";")[0]!.split("=")[1]!);
  });

  it("refuses an expired link, an unknown one and bad input", async () => {
    const { accountId } = await buildAccount(t.ctx.db);
    const token = tokenOf(await linkFor(await emailOf(accountId)));
    await t.ctx.db
      .updateTable("dashboard_sign_in_links")
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where("account_id", "=", accountId)
      .execute();
    await t.request().post("/api/v1/auth/sessions").set(fresh()).send({ token }).expect(401);
    await t.request().post("/api/v1/auth/sessions").set(fresh()).send({ token: "not-a-token" }).expect(401);
    const bad = await t.request().post("/api/v1/auth/sessions").set(fresh()).send({ token: "" }).expect(400);
    expect(bad.body.error).toBe("validation_error");
    expect(
      await t.ctx.db
        .selectFrom("dashboard_sessions")
        .selectAll()
        .where("account_id", "=", accountId)
        .execute(),
    ).toEqual([]);
  });
});

describe("calls with the session cookie", () => {
  it("reads the session and calls the same operations as a key, as the account", async () => {
    const s = await signedIn();
    const session = await t.request().get("/api/v1/auth/session").set(s.cookie).expect(200);
    expect(session.body.data).toMatchObject({
      accountId: s.accountId,
      email: s.email,
      csrfToken: s.csrf["X-CSRF-Token"],
    });
    const me = await t.request().get("/api/v1/me").set(s.cookie).expect(200);
    expect(me.body.data.id).toBe(s.accountId);
    expect(me.headers["x-ratelimit-limit"]).toBe("600");
  });

  it("refuses a call that changes something without the right X-CSRF-Token, and changes nothing", async () => {
    const s = await signedIn();
    for (const headers of [
      {},
      { "X-CSRF-Token": "wrong" },
      { "X-CSRF-Token": `${s.csrf["X-CSRF-Token"]}x` },
    ]) {
      const res = await t
        .request()
        .post("/api/v1/api-keys")
        .set(s.cookie)
        .set(headers)
        .send({ name: "csrf" })
        .expect(403);
      expect(res.body).toEqual({ error: "forbidden", message: expect.stringContaining("CSRF") });
    }
    const other = await signedIn();
    // Another session's CSRF token does not fit this session.
    await t
      .request()
      .post("/api/v1/api-keys")
      .set(s.cookie)
      .set(other.csrf)
      .send({ name: "csrf" })
      .expect(403);
    const keys = await t.request().get("/api/v1/api-keys").set(s.cookie).expect(200);
    expect(keys.body.data).toHaveLength(1);
    await t
      .request()
      .post("/api/v1/api-keys")
      .set(s.cookie)
      .set(s.csrf)
      .send({ name: "with csrf" })
      .expect(201);
  });

  it("never reaches another account's data through the session", async () => {
    const a = await signedIn();
    const b = await buildAccount(t.ctx.db);
    const bKeys = await t.request().get("/api/v1/api-keys").set(b.auth).expect(200);
    const bKeyId = bKeys.body.data[0].id as number;
    const listed = await t.request().get("/api/v1/api-keys").set(a.cookie).expect(200);
    expect(listed.body.data.map((k: { id: number }) => k.id)).not.toContain(bKeyId);
    await t.request().post(`/api/v1/api-keys/${bKeyId}/revoke`).set(a.cookie).set(a.csrf).expect(404);
    await t.request().get("/api/v1/me").set(b.auth).expect(200);
  });

  it("records keys and integrations made in the dashboard as createdVia {channel: dashboard, apiKey: null}", async () => {
    const s = await signedIn();
    const created = await t
      .request()
      .post("/api/v1/integrations/webhook")
      .set(s.cookie)
      .set(s.csrf)
      .send({
        provider: "generic_webhook",
        displayName: "From the dashboard",
        targetUrl: "https://hooks.example.com/in/dashboard",
        events: ["lead.created"],
      })
      .expect(201);
    expect(created.body.data.integration.createdVia).toEqual({ channel: "dashboard", apiKey: null });
    const id = created.body.data.integration.id as number;
    const changed = await t
      .request()
      .patch(`/api/v1/integrations/${id}`)
      .set(s.cookie)
      .set(s.csrf)
      .send({ displayName: "Renamed in the dashboard" })
      .expect(200);
    expect(changed.body.data.lastChangedVia).toEqual({ channel: "dashboard", apiKey: null });
    const viaKey = await t
      .request()
      .post("/api/v1/integrations/webhook")
      .set(s.auth)
      .send({
        provider: "generic_webhook",
        displayName: "From a key",
        targetUrl: "https://hooks.example.com/in/key",
        events: ["lead.created"],
      })
      .expect(201);
    expect(viaKey.body.data.integration.createdVia).toMatchObject({
      channel: "api",
      apiKey: { name: "Default key" },
    });
  });

  it("a key wins over the cookie; the session's own operations take only the cookie", async () => {
    const s = await signedIn();
    const other = await buildAccount(t.ctx.db);
    const me = await t.request().get("/api/v1/me").set(s.cookie).set(other.auth).expect(200);
    expect(me.body.data.id).toBe(other.accountId);
    await t.request().get("/api/v1/auth/session").set(other.auth).expect(401);
    await t.request().delete("/api/v1/auth/session").set(other.auth).expect(401);
  });

  it("lets an unpaid account sign in and out but refuses its other calls with 403", async () => {
    const s = await signedIn({ status: "canceled" });
    await t.request().get("/api/v1/auth/session").set(s.cookie).expect(200);
    const res = await t.request().get("/api/v1/me").set(s.cookie).expect(403);
    expect(res.body.error).toBe("forbidden");
    await t.request().delete("/api/v1/auth/session").set(s.cookie).set(s.csrf).expect(200);
  });
});

describe("signing out", () => {
  it("needs the CSRF token, revokes the session at once and clears the cookie", async () => {
    const s = await signedIn();
    await t.request().delete("/api/v1/auth/session").set(s.cookie).expect(403);
    const res = await t.request().delete("/api/v1/auth/session").set(s.cookie).set(s.csrf).expect(200);
    expect(res.body).toEqual({ data: { message: "Signed out." } });
    expect(String(res.headers["set-cookie"])).toMatch(
      /^svc_session=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0$/,
    );
    for (const path of ["/api/v1/auth/session", "/api/v1/me", "/api/v1/api-keys"]) {
      const refused = await t.request().get(path).set(s.cookie).expect(401);
      expect(refused.body.error).toBe("unauthorized");
    }
  });

  it("refuses an expired session", async () => {
    const s = await signedIn();
    await t.ctx.db
      .updateTable("dashboard_sessions")
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where("account_id", "=", s.accountId)
      .execute();
    await t.request().get("/api/v1/me").set(s.cookie).expect(401);
    await t.request().get("/api/v1/me").set({ Cookie: "svc_session=made-up" }).expect(401);
  });
});

describe("the session cookie's attributes", () => {
  it("is Secure when PUBLIC_BASE_URL is https, and never readable by scripts", () => {
    expect(sessionCookie("tok", "https://leads.example.com")).toBe(
      "svc_session=tok; Path=/; HttpOnly; SameSite=Lax; Max-Age=604800; Secure",
    );
    expect(clearedSessionCookie("https://leads.example.com")).toBe(
      "svc_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure",
    );
    expect(sessionCookie("tok", "http://localhost:3000")).not.toContain("Secure");
  });
});

describe("request logs of the dashboard's calls", () => {
  it("never carry the link token, the session cookie or the CSRF token", async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = pino({ level: "info", redact: { paths: REDACTED_PATHS, censor: "[redacted]" } }, stream);
    const app = createApp({ ...t.ctx, logger });
    const { accountId } = await buildAccount(t.ctx.db);
    const email = await emailOf(accountId);
    await supertest(app).post("/api/v1/auth/sign-in-links").set(fresh()).send({ email }).expect(202);
    const token = tokenOf(await waitForSignInLink(t.ctx.config.dataDir, email));
    const res = await supertest(app).post("/api/v1/auth/sessions").set(fresh()).send({ token }).expect(201);
    const session = String(res.headers["set-cookie"]).split(";")[0]!;
    const csrf = res.body.data.csrfToken as string;
    await supertest(app)
      .delete("/api/v1/auth/session")
      .set("Cookie", session)
      .set("X-CSRF-Token", csrf)
      .expect(200);

    const text = lines.join("");
    expect(text).toContain("/api/v1/auth/sessions");
    // The headers are logged, with the secrets' values replaced.
    expect(text).toContain('"set-cookie":"[redacted]"');
    expect(text).toContain('"x-csrf-token":"[redacted]"');
    for (const secret of [token, session.split("=")[1]!, csrf]) expect(text).not.toContain(secret);
  });
});
