import type { Runner } from "graphile-worker";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app/create-app.js";
import { chargeCredits, grantCredits, lockAccountCredits } from "../src/credits/ledger.js";
import { createMailer, type Mailer } from "../src/mail/mailer.js";
import { Outbound } from "../src/outbound/index.js";
import { useTestApp } from "./helpers/app.js";
import { startDeliveryRunner } from "./helpers/delivery-runner.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLead, uniqueWord } from "./helpers/leads-factories.js";
import { expectKeyAndPlanRequired } from "./helpers/lead-records-factories.js";
import { startSmtpServer } from "./helpers/smtp.js";
import {
  createWebhook as createWebhookAt,
  expectContractEvent,
  startReceiver,
  verifyDelivery,
} from "./helpers/webhook-receiver.js";

const t = useTestApp();
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let mailer: Mailer;
let runner: Runner;

beforeAll(async () => {
  receiver = await startReceiver();
  smtp = await startSmtpServer();
  mailer = createMailer({
    smtpUrl: smtp.url,
    dataDir: t.ctx.config.dataDir,
    from: "Lead Service <no-reply@localhost>",
    logger: pino({ level: "silent" }),
  });
  runner = await startDeliveryRunner(t.ctx, { mailer });
});
afterAll(async () => {
  await runner?.stop();
  mailer?.close();
  await smtp?.close();
  await receiver?.close();
});

type Auth = { Authorization: string };

const createWebhook = (auth: Auth, events: string[], extra: object = {}) =>
  createWebhookAt(t, receiver, auth, events, extra);
const at = (path: string) => receiver.at(path);
const waitForAt = (path: string, count: number, timeoutMs?: number) =>
  receiver.waitForAt(path, count, timeoutMs);

async function getIntegration(auth: Auth, id: number) {
  return (await t.request().get(`/api/v1/integrations/${id}`).set(auth).expect(200)).body.data;
}

async function balanceOf(auth: Auth): Promise<number> {
  return (await t.request().get("/api/v1/me").set(auth).expect(200)).body.data.totalCreditsRemaining;
}

describe("POST /integrations/{id}/test", () => {
  it("sends a real signed lead.created test event and answers its outcome", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const hook = await createWebhook(auth, ["lead.created"], { apiKey: "receiver-key-1" });
    const res = await t.request().post(`/api/v1/integrations/${hook.id}/test`).set(auth).send({}).expect(200);
    expect(res.body.data).toEqual({
      status: "success",
      statusCode: 200,
      latencyMs: expect.any(Number),
      error: null,
    });
    const [got] = await waitForAt(hook.path, 1);
    verifyDelivery(got!, hook.secret);
    expectContractEvent(got!.event);
    expect(got!.event.data).toMatchObject({ test: true, sample: { companyName: expect.any(String) } });
    expect(got!.headers["x-svc-api-key"]).toBe("receiver-key-1");
    const deliveries = await t
      .request()
      .get(`/api/v1/integrations/${hook.id}/deliveries`)
      .set(auth)
      .expect(200);
    expect(deliveries.body.data[0]).toMatchObject({
      eventType: "lead.created",
      status: "success",
      attemptCount: 1,
    });
  });

  it("sends a sample export.leads batch", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const hook = await createWebhook(auth, ["export.leads"]);
    await t
      .request()
      .post(`/api/v1/integrations/${hook.id}/test`)
      .set(auth)
      .send({ eventType: "export.leads" })
      .expect(200);
    const [got] = await waitForAt(hook.path, 1);
    expectContractEvent(got!.event);
    expect(got!.event.data).toMatchObject({ batchIndex: 1, batchCount: 1, totalLeads: 1, test: true });
  });

  it("answers 200 with status failed and the first 500 characters of a non-2xx answer", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const hook = await createWebhook(auth, ["lead.created"]);
    receiver.answers.push({ status: 422, body: "x".repeat(700) });
    const res = await t.request().post(`/api/v1/integrations/${hook.id}/test`).set(auth).send({}).expect(200);
    expect(res.body.data).toMatchObject({ status: "failed", statusCode: 422, error: "x".repeat(500) });
    receiver.answers.push({ status: 500, body: "" });
    const empty = await t
      .request()
      .post(`/api/v1/integrations/${hook.id}/test`)
      .set(auth)
      .send({})
      .expect(200);
    expect(empty.body.data.error).toBe("HTTP 500");
    const deliveries = await t
      .request()
      .get(`/api/v1/integrations/${hook.id}/deliveries`)
      .set(auth)
      .expect(200);
    expect(deliveries.body.data[1].responseBody).toHaveLength(700);
  });

  it("refuses a paused integration with 400; export.leads on table_webhook is 400 validation_error", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const hook = await createWebhook(auth, ["lead.created"]);
    await t
      .request()
      .patch(`/api/v1/integrations/${hook.id}`)
      .set(auth)
      .send({ status: "disabled" })
      .expect(200);
    const paused = await t
      .request()
      .post(`/api/v1/integrations/${hook.id}/test`)
      .set(auth)
      .send({})
      .expect(400);
    expect(paused.body.error).toBe("bad_request");
    const table = await t
      .request()
      .post("/api/v1/integrations/webhook")
      .set(auth)
      .send({
        provider: "table_webhook",
        displayName: "Table",
        targetUrl: receiver.url("/table"),
        events: ["lead.created"],
      })
      .expect(201);
    const res = await t
      .request()
      .post(`/api/v1/integrations/${table.body.data.integration.id}/test`)
      .set(auth)
      .send({ eventType: "export.leads" })
      .expect(400);
    expect(res.body.error).toBe("validation_error");
    const bad = await t
      .request()
      .post(`/api/v1/integrations/${hook.id}/test`)
      .set(auth)
      .send({ eventType: "lead.updated" })
      .expect(400);
    expect(bad.body.error).toBe("validation_error");
  });
});

describe("needs_attention", () => {
  it("five failed attempts in a row pause the integration, tell the owner, park its deliveries; re-enabling sends them", async () => {
    // Live events are written only for connected integrations: an event of the pause is not sent
    // later; a delivery already on its way waits (parked) and goes out once connected again.
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const owner = await t.ctx.db
      .selectFrom("accounts")
      .select("email")
      .where("id", "=", accountId)
      .executeTakeFirstOrThrow();
    const word = uniqueWord();
    await buildLead(t.ctx.db, { company_name: `${word} One` });
    const hook = await createWebhook(auth, ["lead.created"]);
    for (let i = 0; i < 5; i += 1) receiver.answers.push({ status: 500, body: "down" });
    await t.request().get("/api/v1/leads").query({ positiveKeywords: word }).set(auth).expect(200);
    await waitForAt(hook.path, 5);
    const mail = await smtp.waitFor(
      (m) => m.to.includes(owner.email) && /needs attention/i.test(m.text),
      10_000,
    );
    expect(mail.text).toContain(`${hook.id}`);
    const paused = await getIntegration(auth, hook.id);
    expect(paused).toMatchObject({ status: "needs_attention", consecutiveFailures: 5 });
    // Nothing more is sent while it needs attention.
    await buildLead(t.ctx.db, { company_name: `${word} Two` });
    await t.request().get("/api/v1/leads").query({ positiveKeywords: word }).set(auth).expect(200);
    await new Promise((r) => setTimeout(r, 500));
    expect(at(hook.path)).toHaveLength(5);
    const push = await t
      .request()
      .post(`/api/v1/integrations/${hook.id}/push-lead`)
      .set(auth)
      .send({ lead: { companyName: "X" } });
    expect(push.status).toBe(400);
    // A successful test connects it again, and what waited is sent.
    const test = await t
      .request()
      .post(`/api/v1/integrations/${hook.id}/test`)
      .set(auth)
      .send({})
      .expect(200);
    expect(test.body.data.status).toBe("success");
    expect((await getIntegration(auth, hook.id)).status).toBe("connected");
    const got = await waitForAt(hook.path, 7);
    expect(got[6]!.event.id).toBe(got[0]!.event.id);
    expect((got[6]!.event.data as { companyName?: string }).companyName).toBe(`${word} One`);
    await new Promise((r) => setTimeout(r, 300));
    expect(at(hook.path)).toHaveLength(7);
  });
});

describe("POST /integrations/{id}/deliveries/{deliveryId}/retry", () => {
  it("sends the stored data once more as a new event to the original URL", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const hook = await createWebhook(auth, ["lead.created"]);
    receiver.answers.push({ status: 500, body: "no" });
    await t.request().post(`/api/v1/integrations/${hook.id}/test`).set(auth).send({}).expect(200);
    const [failed] = (await t.request().get(`/api/v1/integrations/${hook.id}/deliveries`).set(auth)).body
      .data;
    expect(failed.status).toBe("failed");
    const res = await t
      .request()
      .post(`/api/v1/integrations/${hook.id}/deliveries/${failed.id}/retry`)
      .set(auth)
      .expect(200);
    expect(res.body.data).toMatchObject({ status: "success", statusCode: 200, error: null });
    const got = await waitForAt(hook.path, 2);
    expect(got[1]!.event.data).toEqual(got[0]!.event.data);
    expect(got[1]!.event.id).not.toBe(got[0]!.event.id);
    await t.request().post(`/api/v1/integrations/${hook.id}/deliveries/999999/retry`).set(auth).expect(404);
  });
});

describe("POST /integrations/{id}/push-lead", () => {
  it("charges a new lead once, tracks it, and tells the account's other integrations (lead.created, then lead.updated)", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const leadId = await buildLead(t.ctx.db, { company_name: `${uniqueWord()} Pushed` });
    const target = await createWebhook(auth, ["lead.created", "lead.updated"]);
    const other = await createWebhook(auth, ["lead.created", "lead.updated"]);
    const before = await balanceOf(auth);
    const res = await t
      .request()
      .post(`/api/v1/integrations/${target.id}/push-lead`)
      .set(auth)
      .send({ leadId })
      .expect(200);
    expect(res.body.data).toEqual({
      status: "success",
      tracked: true,
      creditsUsed: 1,
      result: { statusCode: 200, latencyMs: expect.any(Number) },
      error: null,
    });
    expect(await balanceOf(auth)).toBe(before - 1);
    const [pushed] = await waitForAt(target.path, 1);
    verifyDelivery(pushed!, target.secret);
    expect(pushed!.event).toMatchObject({ type: "lead.created", data: { id: leadId, source: "crm_push" } });
    const [toOther] = await waitForAt(other.path, 1);
    expect(toOther!.event).toMatchObject({ type: "lead.created", data: { id: leadId } });
    const history = await t.request().get("/api/v1/lead-export-history").set(auth).expect(200);
    expect(history.body.data[0]).toMatchObject({ leadId, exportMethod: "crm_push" });

    const again = await t
      .request()
      .post(`/api/v1/integrations/${target.id}/push-lead`)
      .set(auth)
      .send({ leadId })
      .expect(200);
    expect(again.body.data).toMatchObject({ status: "success", tracked: true, creditsUsed: 0 });
    expect(await balanceOf(auth)).toBe(before - 1);
    const otherGot = await waitForAt(other.path, 2);
    expect(otherGot[1]!.event).toMatchObject({ type: "lead.updated", data: { id: leadId } });
    await new Promise((r) => setTimeout(r, 300));
    expect(at(target.path)).toHaveLength(2);
    expect(at(other.path)).toHaveLength(2);
  });

  it("sends own data free and untracked", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const hook = await createWebhook(auth, ["lead.created"]);
    const before = await balanceOf(auth);
    const lead = { companyName: "My Own Co", email: "me@own.example", customField: "kept" };
    const res = await t
      .request()
      .post(`/api/v1/integrations/${hook.id}/push-lead`)
      .set(auth)
      .send({ lead })
      .expect(200);
    expect(res.body.data).toMatchObject({ status: "success", tracked: false, creditsUsed: 0 });
    const [got] = await waitForAt(hook.path, 1);
    expect(got!.event.data).toEqual({ lead, source: "manual_push" });
    expectContractEvent(got!.event);
    expect(await balanceOf(auth)).toBe(before);
  });

  it("refuses a blacklisted lead with 400 before charging or sending; 404 for an unknown lead; 402 at zero balance", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const hook = await createWebhook(auth, ["lead.created"]);
    const blocked = await buildLead(t.ctx.db, { registered_url: "https://blocked-shop.example/about" });
    await t
      .request()
      .post("/api/v1/export-blacklist")
      .set(auth)
      .send({ entries: [{ entryType: "domain", value: "blocked-shop.example" }] })
      .expect(201);
    const before = await balanceOf(auth);
    const res = await t
      .request()
      .post(`/api/v1/integrations/${hook.id}/push-lead`)
      .set(auth)
      .send({ leadId: blocked })
      .expect(400);
    expect(res.body.error).toBe("bad_request");
    const missing = await t
      .request()
      .post(`/api/v1/integrations/${hook.id}/push-lead`)
      .set(auth)
      .send({ leadId: 2_000_000_000 })
      .expect(404);
    expect(missing.body.error).toBe("not_found");
    expect(await balanceOf(auth)).toBe(before);

    await t.ctx.db.transaction().execute(async (trx) => {
      const { periodStart } = await lockAccountCredits(trx, accountId);
      await chargeCredits(trx, {
        accountId,
        periodStart,
        tenths: before * 10,
        reason: "test",
        reference: "drain",
      });
    });
    const fresh = await buildLead(t.ctx.db, {});
    const broke = await t
      .request()
      .post(`/api/v1/integrations/${hook.id}/push-lead`)
      .set(auth)
      .send({ leadId: fresh })
      .expect(402);
    expect(broke.body.error).toBe("insufficient_credits");
    await new Promise((r) => setTimeout(r, 200));
    expect(at(hook.path)).toHaveLength(0);
  });
});

describe("credit.low_balance", () => {
  it("is sent once when a charge takes the balance below 100 credits, and again after it was topped up", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const hook = await createWebhook(auth, ["credit.low_balance"]);
    const balance = await balanceOf(auth);
    const drain = (tenths: number) =>
      t.ctx.db.transaction().execute(async (trx) => {
        const { periodStart } = await lockAccountCredits(trx, accountId);
        await chargeCredits(trx, { accountId, periodStart, tenths, reason: "test", reference: "drain" });
      });
    await drain((balance - 101) * 10);
    const word = uniqueWord();
    await buildLead(t.ctx.db, { company_name: `${word} A` });
    await buildLead(t.ctx.db, { company_name: `${word} B` });
    await t.request().get("/api/v1/leads").query({ positiveKeywords: word, limit: 1 }).set(auth).expect(200);
    await new Promise((r) => setTimeout(r, 300));
    expect(at(hook.path)).toHaveLength(0);
    await t.request().get("/api/v1/leads").query({ positiveKeywords: word, limit: 2 }).set(auth).expect(200);
    const [got] = await waitForAt(hook.path, 1);
    expectContractEvent(got!.event);
    expect(got!.event.data).toMatchObject({ totalCreditsRemaining: 99, threshold: 100 });
    // Still below: no second event. Topped up to 101, then below again: a second event.
    await buildLead(t.ctx.db, { company_name: `${word} C` });
    await t.request().get("/api/v1/leads").query({ positiveKeywords: word, limit: 3 }).set(auth).expect(200);
    await new Promise((r) => setTimeout(r, 300));
    expect(at(hook.path)).toHaveLength(1);
    await grantCredits(t.ctx.db, { accountId, bucket: "permanent", tenths: 30, reason: "test" });
    await buildLead(t.ctx.db, { company_name: `${word} D` });
    await buildLead(t.ctx.db, { company_name: `${word} E` });
    await t.request().get("/api/v1/leads").query({ positiveKeywords: word, limit: 5 }).set(auth).expect(200);
    const both = await waitForAt(hook.path, 2);
    expect(both[1]!.event.data).toMatchObject({ totalCreditsRemaining: 99 });
  });
});

describe("outbound safety at every attempt", () => {
  it("refuses a destination whose name resolves to a private address at delivery time (DNS rebinding)", async () => {
    let answer = "93.184.216.34";
    const outbound = new Outbound({ allowPrivate: false, resolve: async () => [answer] });
    const app = createApp({ ...t.ctx, outbound });
    const { auth } = await buildAccount(t.ctx.db);
    const created = await (
      await import("supertest")
    )
      .default(app)
      .post("/api/v1/integrations/webhook")
      .set(auth)
      .send({
        provider: "generic_webhook",
        displayName: "Rebind",
        targetUrl: "http://rebind.example/hook",
        events: ["lead.created"],
      })
      .expect(201);
    answer = "127.0.0.1";
    const res = await (
      await import("supertest")
    )
      .default(app)
      .post(`/api/v1/integrations/${created.body.data.integration.id}/test`)
      .set(auth)
      .send({})
      .expect(200);
    expect(res.body.data).toMatchObject({ status: "failed", statusCode: null });
    expect(res.body.data.error).toMatch(/refused/);
    outbound.close();
  });
});

describe("account isolation and keys", () => {
  it("another account's integration or delivery is 404 everywhere", async () => {
    const owner = await buildAccount(t.ctx.db);
    const stranger = await buildAccount(t.ctx.db);
    const hook = await createWebhook(owner.auth, ["lead.created"]);
    await t.request().post(`/api/v1/integrations/${hook.id}/test`).set(owner.auth).send({}).expect(200);
    const [delivery] = (await t.request().get(`/api/v1/integrations/${hook.id}/deliveries`).set(owner.auth))
      .body.data;
    const base = `/api/v1/integrations/${hook.id}`;
    await t.request().get(`${base}/deliveries`).set(stranger.auth).expect(404);
    await t.request().post(`${base}/test`).set(stranger.auth).send({}).expect(404);
    await t.request().post(`${base}/deliveries/${delivery.id}/retry`).set(stranger.auth).expect(404);
    await t
      .request()
      .post(`${base}/push-lead`)
      .set(stranger.auth)
      .send({ lead: { companyName: "x" } })
      .expect(404);
    const strangerHook = await createWebhook(stranger.auth, ["lead.created"]);
    await t
      .request()
      .post(`/api/v1/integrations/${strangerHook.id}/deliveries/${delivery.id}/retry`)
      .set(stranger.auth)
      .expect(404);
  });

  it("needs a valid key of an account with a paid plan", async () => {
    await expectKeyAndPlanRequired(t, [
      { method: "get", path: "/api/v1/integrations/1/deliveries" },
      { method: "post", path: "/api/v1/integrations/1/test", body: {} },
      { method: "post", path: "/api/v1/integrations/1/deliveries/1/retry" },
      { method: "post", path: "/api/v1/integrations/1/push-lead", body: { leadId: 1 } },
    ]);
  });
});
