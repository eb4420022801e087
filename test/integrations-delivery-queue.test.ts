import { sql } from "kysely";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliverDue } from "../src/integrations/deliveries/deliver.js";
import type { DeliverDeps } from "../src/integrations/deliveries/attempts.js";
import { dispatchAccountEvents } from "../src/integrations/deliveries/dispatch.js";
import { CLAIM_SIZE, lockDueDeliveries } from "../src/integrations/deliveries/repository.js";
import { recordDeliveredLeads } from "../src/leads/versions.js";
import { useTestApp } from "./helpers/app.js";
import { accountWithLeadDeliveries } from "./helpers/delivery-factories.js";
import { TEST_RETRY_DELAYS_MS } from "./helpers/delivery-runner.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLeads } from "./helpers/leads-factories.js";
import { createWebhook, startReceiver, type Receiver } from "./helpers/webhook-receiver.js";

// The delivery queue (docs/events.md "The delivery queue"), driven by hand: no runner runs here,
// so each test decides when claimers run and what they find.
const t = useTestApp();
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

const deps = (): DeliverDeps => ({
  db: t.ctx.db,
  outbound: t.ctx.outbound,
  logger: pino({ level: "silent" }),
  retryDelaysMs: TEST_RETRY_DELAYS_MS,
});

/** An account with a `lead.created` webhook and `count` lead events dispatched into deliveries. */
const dispatched = (count: number) => accountWithLeadDeliveries(t, receiver, count);

async function deliveryRows(integrationId: number) {
  return t.ctx.db
    .selectFrom("integration_deliveries")
    .select(["id", "event_id", "status", "attempt_count", "next_attempt_at"])
    .where("integration_id", "=", integrationId)
    .orderBy("id")
    .execute();
}

describe("the delivery queue", () => {
  it("sends each due delivery once when claimers run at the same time", async () => {
    const count = CLAIM_SIZE * 2 + 50;
    const { hook } = await dispatched(count);
    await Promise.all([deliverDue(deps()), deliverDue(deps()), deliverDue(deps())]);
    const got = receiver.at(hook.path);
    expect(got).toHaveLength(count);
    expect(new Set(got.map((r) => r.event.id)).size).toBe(count);
    const rows = await deliveryRows(hook.id);
    expect(rows).toHaveLength(count);
    for (const row of rows) {
      expect(row).toMatchObject({ status: "success", attempt_count: 1, next_attempt_at: null });
    }
    expect(new Set(got.map((r) => r.event.id))).toEqual(new Set(rows.map((r) => r.event_id)));
  });

  it("leaves what a claimer holds alone, and sends it as soon as that claimer dies", async () => {
    const { hook } = await dispatched(30);
    // A claimer takes 10 in its transaction and dies (rolls back) before sending them.
    let heldIds = new Set<string>();
    await expect(
      t.ctx.db.transaction().execute(async (trx) => {
        const held = await lockDueDeliveries(trx, 10);
        expect(held).toHaveLength(10);
        heldIds = new Set(held.map((d) => d.eventId));
        await deliverDue(deps());
        throw new Error("the claimer died");
      }),
    ).rejects.toThrow("the claimer died");
    expect(receiver.at(hook.path)).toHaveLength(20);
    expect(receiver.at(hook.path).some((r) => heldIds.has(r.event.id))).toBe(false);
    // Nothing was written for them: the next claimer sends them, once each.
    await deliverDue(deps());
    const got = receiver.at(hook.path);
    expect(got).toHaveLength(30);
    expect(new Set(got.map((r) => r.event.id)).size).toBe(30);
    for (const row of await deliveryRows(hook.id)) {
      expect(row).toMatchObject({ status: "success", attempt_count: 1 });
    }
  });

  it("lets an integration be deleted while a claim is sending to it, and records the rest", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const doomed = await createWebhook(t, receiver, auth, ["lead.created"]);
    const kept = await createWebhook(t, receiver, auth, ["lead.created"]);
    const leadIds = await buildLeads(t.ctx.db, 3, () => ({}));
    await t.ctx.db
      .transaction()
      .execute((trx) =>
        recordDeliveredLeads(trx, { accountId, method: "api", exportedAt: new Date(), leadIds }),
      );
    await dispatchAccountEvents(t.ctx.db, accountId);
    // Every answer takes 300 ms: the claim holds its rows that long.
    for (let i = 0; i < 6; i += 1) receiver.answers.push({ status: 200, delayMs: 300 });
    const delivering = deliverDue(deps());
    await new Promise((resolve) => setTimeout(resolve, 100));
    await t.request().delete(`/api/v1/integrations/${doomed.id}`).set(auth).expect(200);
    await delivering;
    expect(await deliveryRows(doomed.id)).toHaveLength(0);
    const rows = await deliveryRows(kept.id);
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row).toMatchObject({ status: "success", attempt_count: 1 });
  });

  it("records failed attempts of one claim together, schedules their retry and wakes a claimer then", async () => {
    const { hook } = await dispatched(3);
    receiver.answers.push({ status: 500 }, { status: 500 }, { status: 500 });
    const before = Date.now();
    await deliverDue(deps());
    const rows = await deliveryRows(hook.id);
    for (const row of rows) {
      expect(row).toMatchObject({ status: "pending", attempt_count: 1 });
      expect(row.next_attempt_at!.getTime()).toBeGreaterThan(before);
    }
    const { rows: wakeUps } = await sql<{ run_at: Date }>`
      select run_at from graphile_worker.jobs
      where task_identifier = 'integrations__deliver' and run_at > ${new Date(before)}`.execute(t.ctx.db);
    const earliest = Math.min(...rows.map((r) => r.next_attempt_at!.getTime()));
    expect(wakeUps.some((j) => Math.abs(j.run_at.getTime() - earliest) < 5)).toBe(true);
    // Due again: the retry goes out and succeeds, with the same event ids.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, earliest - Date.now()) + 250));
    await deliverDue(deps());
    expect(receiver.at(hook.path)).toHaveLength(6);
    for (const row of await deliveryRows(hook.id)) {
      expect(row).toMatchObject({ status: "success", attempt_count: 2, next_attempt_at: null });
    }
  });

  it("counts the failures of one claim in a row: the fifth moves the integration to needs_attention", async () => {
    const { hook } = await dispatched(5);
    for (let i = 0; i < 5; i += 1) receiver.answers.push({ status: 503 });
    await deliverDue(deps());
    const integration = await t.ctx.db
      .selectFrom("integrations")
      .select(["status", "consecutive_failures"])
      .where("id", "=", hook.id)
      .executeTakeFirstOrThrow();
    expect(integration).toEqual({ status: "needs_attention", consecutive_failures: 5 });
    // The owner's alert is mailed once (a mail__send job; its payload names the integration).
    const { rows: mails } = await sql<{ payload: { subject?: string; text?: string } }>`
      select j.payload from graphile_worker._private_jobs j
      join graphile_worker._private_tasks k on k.id = j.task_id
      where k.identifier = 'mail__send'`.execute(t.ctx.db);
    const alerts = mails.filter((m) => JSON.stringify(m.payload).includes(`Integration ${hook.id} (`));
    expect(alerts).toHaveLength(1);
  });
});
