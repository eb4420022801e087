import type { Runner } from "graphile-worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordDeliveredLeads } from "../src/leads/versions.js";
import { useJobRunner, useTestApp } from "./helpers/app.js";
import { startDeliveryRunner } from "./helpers/delivery-runner.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLead, uniqueWord } from "./helpers/leads-factories.js";
import {
  createWebhook as createWebhookAt,
  expectContractEvent,
  startReceiver,
  verifyDelivery,
} from "./helpers/webhook-receiver.js";

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

const createWebhook = (auth: Auth, events: string[], extra: object = {}) =>
  createWebhookAt(t, receiver, auth, events, extra);
const receivedAt = (path: string) => receiver.at(path);
const waitForAt = (path: string, count: number, timeoutMs?: number) =>
  receiver.waitForAt(path, count, timeoutMs);

async function deliveriesOf(auth: Auth, id: number) {
  const res = await t.request().get(`/api/v1/integrations/${id}/deliveries`).set(auth).expect(200);
  return res.body.data as {
    id: number;
    eventType: string;
    status: string;
    attemptCount: number;
    statusCode: number | null;
    errorMessage: string | null;
    batchSummary?: Record<string, number | string>;
  }[];
}

/**
 * Waits (reading the database: the API allows 60 integration requests a minute) until the
 * integration's deliveries satisfy `done`, then answers them through the API.
 */
async function waitForDeliveries(
  auth: Auth,
  id: number,
  done: (d: Awaited<ReturnType<typeof deliveriesOf>>) => boolean,
) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const rows = await t.ctx.db
      .selectFrom("integration_deliveries")
      .select([
        "id",
        "event_type",
        "status",
        "attempt_count",
        "status_code",
        "error_message",
        "batch_summary",
      ])
      .where("integration_id", "=", id)
      .orderBy("id", "desc")
      .execute();
    const list = rows.map((r) => ({
      id: r.id,
      eventType: r.event_type,
      status: r.status,
      attemptCount: r.attempt_count,
      statusCode: r.status_code,
      errorMessage: r.error_message,
      batchSummary: (r.batch_summary ?? undefined) as Record<string, number | string> | undefined,
    }));
    if (done(list)) return deliveriesOf(auth, id);
    if (Date.now() > deadline) throw new Error(`deliveries not done: ${JSON.stringify(list)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function searchLeads(auth: Auth, word: string) {
  return t.request().get("/api/v1/leads").query({ positiveKeywords: word, limit: 50 }).set(auth).expect(200);
}

describe("lead events of a search", () => {
  it("sends one signed lead.created per new lead to each subscribed integration, in the contract's shape", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const word = uniqueWord();
    const leadIds = [
      await buildLead(t.ctx.db, { company_name: `${word} Plumbing`, registered_url: "https://one.example" }),
      await buildLead(t.ctx.db, { company_name: `${word} Roofing` }),
    ];
    const a = await createWebhook(auth, ["lead.created"]);
    const b = await createWebhook(auth, ["lead.created", "lead.updated"]);
    const other = await createWebhook(auth, ["export.completed"]);
    await searchLeads(auth, word);

    for (const hook of [a, b]) {
      const got = await waitForAt(hook.path, 2);
      for (const delivery of got) {
        verifyDelivery(delivery, hook.secret);
        expectContractEvent(delivery.event);
        expect(delivery.headers["content-type"]).toBe("application/json");
        expect(delivery.headers["user-agent"]).toBe("Service-Webhooks/1.0");
        expect(delivery.headers["x-svc-event"]).toBe("lead.created");
        expect(delivery.headers["x-svc-api-key"]).toBeUndefined();
        expect(delivery.event).toMatchObject({
          type: "lead.created",
          userId: accountId,
          integrationId: hook.id,
          provider: "generic_webhook",
        });
        expect(delivery.event.id).toMatch(/^evt_[0-9]+_[A-Za-z0-9]+$/);
        expect(delivery.event.data.source).toBe("api");
      }
      expect(got.map((d) => d.event.data.id).sort()).toEqual([...leadIds].sort());
      // Verified with another secret, the signature fails.
      expect(() => verifyDelivery(got[0]!, "whsec_wrong")).toThrow();
    }
    expect(receivedAt(other.path)).toHaveLength(0);
    // The same search again: nothing new, nothing changed: no event.
    await searchLeads(auth, word);
    await new Promise((r) => setTimeout(r, 400));
    expect(receivedAt(a.path)).toHaveLength(2);
    expect(receivedAt(b.path)).toHaveLength(2);
  });

  it("sends lead.updated when a lead the account has is received again with newer data", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const word = uniqueWord();
    const leadId = await buildLead(t.ctx.db, { company_name: `${word} Electric` });
    const hook = await createWebhook(auth, ["lead.created", "lead.updated"]);
    await searchLeads(auth, word);
    await waitForAt(hook.path, 1);
    await t.ctx.db.updateTable("leads").set({ phone: "(512) 555-9999" }).where("id", "=", leadId).execute();
    await searchLeads(auth, word);
    const got = await waitForAt(hook.path, 2);
    const updated = got.find((d) => d.event.type === "lead.updated");
    expect(updated?.event.data).toMatchObject({ id: leadId, phone: "(512) 555-9999" });
    expectContractEvent(updated?.event);
  });

  it("a delivery that rolls back emits nothing", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const leadId = await buildLead(t.ctx.db, { company_name: `${uniqueWord()} Rolled` });
    await createWebhook(auth, ["lead.created"]);
    await expect(
      t.ctx.db.transaction().execute(async (trx) => {
        await recordDeliveredLeads(trx, {
          accountId,
          method: "api",
          exportedAt: new Date(),
          leadIds: [leadId],
        });
        const pending = await trx
          .selectFrom("event_outbox")
          .select("id")
          .where("account_id", "=", accountId)
          .execute();
        expect(pending).toHaveLength(1);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    const left = await t.ctx.db
      .selectFrom("event_outbox")
      .select("id")
      .where("account_id", "=", accountId)
      .execute();
    expect(left).toHaveLength(0);
    const deliveries = await t.ctx.db
      .selectFrom("integration_deliveries")
      .select("id")
      .where("account_id", "=", accountId)
      .execute();
    expect(deliveries).toHaveLength(0);
  });

  it("writes no outbox row for an account without subscriptions", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const word = uniqueWord();
    await buildLead(t.ctx.db, { company_name: `${word} Quiet` });
    await searchLeads(auth, word);
    const rows = await t.ctx.db
      .selectFrom("event_outbox")
      .select("id")
      .where("account_id", "=", accountId)
      .execute();
    expect(rows).toHaveLength(0);
  });
});

describe("retries", () => {
  it("retries a failing receiver with the same event id until it recovers, then records the success", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const word = uniqueWord();
    await buildLead(t.ctx.db, { company_name: `${word} Retry` });
    const hook = await createWebhook(auth, ["lead.created"]);
    receiver.answers.push({ status: 500, body: "boom" }, { status: 503, body: "" });
    await searchLeads(auth, word);
    const got = await waitForAt(hook.path, 3);
    expect(new Set(got.map((d) => d.event.id)).size).toBe(1);
    // Signed afresh at every attempt.
    for (const d of got) verifyDelivery(d, hook.secret);
    const [delivery] = await waitForDeliveries(auth, hook.id, (l) => l[0]?.status === "success");
    expect(delivery).toMatchObject({
      status: "success",
      attemptCount: 3,
      statusCode: 200,
      errorMessage: null,
    });
  });

  it("a 410 answer turns the subscription off and ends the delivery", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const word = uniqueWord();
    await buildLead(t.ctx.db, { company_name: `${word} Gone` });
    const hook = await createWebhook(auth, ["lead.created"]);
    receiver.answers.push({ status: 410, body: "gone" });
    await searchLeads(auth, word);
    const [delivery] = await waitForDeliveries(auth, hook.id, (l) => l[0]?.status === "failed");
    expect(delivery).toMatchObject({ attemptCount: 1, statusCode: 410, errorMessage: "gone" });
    const res = await t.request().get(`/api/v1/integrations/${hook.id}`).set(auth).expect(200);
    expect(res.body.data.subscriptions[0].isActive).toBe(false);
  });

  it("survives a worker stopped in the middle of a retry schedule: nothing lost, same event id", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const word = uniqueWord();
    await buildLead(t.ctx.db, { company_name: `${word} Restart` });
    const hook = await createWebhook(auth, ["lead.created"]);
    await runner.stop();
    const slow = await startDeliveryRunner(t.ctx, { retryDelaysMs: [1_500, 1_500] });
    receiver.answers.push({ status: 500, body: "down" });
    await searchLeads(auth, word);
    await waitForAt(hook.path, 1);
    await slow.stop(); // the next attempt waits in the queue, 1.5 s ahead
    runner = await startDeliveryRunner(t.ctx);
    const got = await waitForAt(hook.path, 2, 15_000);
    expect(got[1]!.event.id).toBe(got[0]!.event.id);
    await waitForDeliveries(auth, hook.id, (l) => l[0]?.status === "success");
  });
});

describe("export events", () => {
  it("sends export.completed and the exported leads as export.leads batches of 100", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const word = uniqueWord();
    for (let i = 0; i < 150; i += 1) await buildLead(t.ctx.db, { company_name: `${word} Shop ${i}` });
    const hook = await createWebhook(auth, ["export.completed", "export.leads"]);
    const res = await t
      .request()
      .post("/api/v1/leads/export")
      .set(auth)
      .send({ positiveKeywords: [word], fileType: "json", inline: false })
      .expect(200);
    const got = await waitForAt(hook.path, 3);
    for (const d of got) {
      verifyDelivery(d, hook.secret);
      expectContractEvent(d.event);
    }
    const completed = got.find((d) => d.event.type === "export.completed");
    expect(completed?.event.data).toMatchObject({
      leadCount: 150,
      fileType: "json",
      method: "api",
      creditsUsed: 150,
    });
    const history = await t.request().get("/api/v1/export-history").set(auth).expect(200);
    expect(completed?.event.data.exportHistoryIds).toEqual([history.body.data[0].id]);
    expect(res.body.data).toBeDefined();
    const batches = got
      .filter((d) => d.event.type === "export.leads")
      .map(
        (d) =>
          d.event.data as {
            batchIndex: number;
            batchCount: number;
            totalLeads: number;
            leads: unknown[];
            exportId: string;
          },
      );
    expect(batches.map((b) => [b.batchIndex, b.batchCount, b.totalLeads, b.leads.length])).toEqual([
      [1, 2, 150, 100],
      [2, 2, 150, 50],
    ]);
    expect(batches[0]!.exportId).toBe(batches[1]!.exportId);
    const list = await waitForDeliveries(auth, hook.id, (l) =>
      l.some((d) => d.eventType === "export.leads" && d.status === "success"),
    );
    const batched = list.find((d) => d.eventType === "export.leads");
    expect(batched?.batchSummary).toEqual({
      exportId: batches[0]!.exportId,
      batchCount: 2,
      batchesSent: 2,
      batchesFailed: 0,
      leadCount: 150,
      leadsSent: 150,
    });
  });

  it("stops a batched delivery at a batch whose attempts run out; a retry queues the unsent batches", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const word = uniqueWord();
    for (let i = 0; i < 120; i += 1) await buildLead(t.ctx.db, { company_name: `${word} Store ${i}` });
    const hook = await createWebhook(auth, ["export.leads"]);
    // A schedule of 3 attempts (fewer than the 5 failures that pause an integration): batch 1
    // goes through, batch 2 fails all of its attempts.
    await runner.stop();
    runner = await startDeliveryRunner(t.ctx, { retryDelaysMs: [100, 100] });
    receiver.answers.push(
      { status: 200 },
      ...Array.from({ length: 3 }, () => ({ status: 500, body: "full" })),
    );
    await t
      .request()
      .post("/api/v1/leads/export")
      .set(auth)
      .send({ positiveKeywords: [word], fileType: "csv" })
      .expect(200);
    const list = await waitForDeliveries(auth, hook.id, (l) => l[0]?.status === "stopped");
    expect(list[0]?.batchSummary).toMatchObject({
      batchCount: 2,
      batchesSent: 1,
      batchesFailed: 1,
      leadsSent: 100,
    });
    const retry = await t
      .request()
      .post(`/api/v1/integrations/${hook.id}/deliveries/${list[0]!.id}/retry`)
      .set(auth)
      .expect(200);
    expect(retry.body.data).toEqual({ status: "queued", queuedBatches: 1, queuedLeads: 20 });
    const done = await waitForDeliveries(auth, hook.id, (l) => l[0]?.status === "success");
    expect(done[0]?.batchSummary).toMatchObject({ batchesSent: 2, batchesFailed: 0, leadsSent: 120 });
    const got = receivedAt(hook.path);
    expect(got).toHaveLength(5);
    // Every attempt of batch 2 carries the same event id.
    expect(new Set(got.slice(1).map((d) => d.event.id)).size).toBe(1);
  });
});
