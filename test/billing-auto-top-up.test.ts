import { runOnce } from "graphile-worker";
import { sql } from "kysely";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { updateAutoTopUp } from "../src/billing/auto-top-up/settings.js";
import { runAutoTopUp } from "../src/billing/auto-top-up/purchase.js";
import { createStripeProcessor } from "../src/billing/processor.js";
import { AUTO_TOP_UP_TASK, billingAutoTopUp } from "../src/billing/tasks/billing__auto_top_up.js";
import { chargeDelivery } from "../src/credits/charge.js";
import { workerLogger } from "../src/jobs/runtime.js";
import { buildWordLeads } from "./helpers/export-job-factories.js";
import { buildAccount } from "./helpers/factories.js";
import { buy, deliver, useBillingApp, type Bought } from "./helpers/stripe-server.js";

// Auto top-up (GET/PATCH /auto-top-up, docs/billing.md): the configuration and its rules, and the
// purchases against the local payment-processor server: queued by the charge that leaves the
// permanent balance below the trigger (once, also under concurrent charges), made by the
// `billing__auto_top_up` job, never past the cap, five declines turning it off with a mail to the
// owner, before the overage budget. Every answer is checked against openapi.yaml (the test app
// validates responses).

const b = useBillingApp();

const processor = () =>
  createStripeProcessor({
    secretKey: b.stripe.secretKey,
    webhookSecret: b.stripe.webhookSecret,
    apiBase: b.stripe.apiBase,
  });

/** What the job task is built with; tests change `retryDelayMs` (0: a decline may be retried at once). */
const taskDeps = { retryDelayMs: 0 as number | undefined };

/** Runs the queued auto top-up jobs (only those) to completion, as the worker would. */
async function runQueuedPurchases(): Promise<void> {
  await runOnce({
    pgPool: b.t.ctx.pool,
    noHandleSignals: true,
    taskList: {
      [AUTO_TOP_UP_TASK]: (payload, helpers) =>
        billingAutoTopUp({
          db: b.t.ctx.db,
          processor: processor(),
          logger: pino({ level: "silent" }),
          retryDelayMs: taskDeps.retryDelayMs,
        })(payload, helpers),
    },
    logger: workerLogger(pino({ level: "silent" })),
  });
}

/** Charges `leads` new leads through chargeDelivery, the one charging path (as a search would). */
const useLeads = (accountId: number, leads: number) =>
  b.t.ctx.db.transaction().execute((trx) =>
    chargeDelivery(trx, {
      accountId,
      reason: "lead_search",
      entryWait: "bounded",
      deliver: () => Promise.resolve({ lead: leads }),
    }),
  );

/** Auto top-up jobs queued for the account. */
async function queuedJobs(accountId: number): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    select count(*) as n from graphile_worker._private_jobs
    where key = ${`${AUTO_TOP_UP_TASK}:${accountId}`}`.execute(b.t.ctx.db);
  return Number(rows[0]?.n);
}

const topUpsOf = (bought: Bought) =>
  b.stripe.paymentIntents.filter(
    (p) => p.customer === bought.customerId && p.metadata.kind === "auto_top_up",
  );

const get = (auth: { Authorization: string }) => b.t.request().get("/api/v1/auto-top-up").set(auth);
const patch = (auth: { Authorization: string }, body: unknown) =>
  b.t
    .request()
    .patch("/api/v1/auto-top-up")
    .set(auth)
    .send(body as object);

const me = async (bought: Bought) =>
  (await b.t.request().get("/api/v1/me").set(bought.auth)).body.data as {
    permanentCredits: number;
    totalCreditsRemaining: number;
  };

/** Buys permanent credits, so the permanent balance starts above the trigger. */
async function buyCredits(bought: Bought, creditCount: number) {
  const res = await b.t.request().post("/api/v1/purchase-credits").set(bought.auth).send({ creditCount });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

const ENABLE = {
  enabled: true,
  triggerType: "credits",
  triggerAmount: 100,
  purchaseType: "credits",
  purchaseAmount: 500,
} as const;

describe("GET / PATCH /auto-top-up", () => {
  it("answers the default, sets, replaces and clears the configuration", async () => {
    const bought = await buy(b, { plan: "growth", trial: false });
    const empty = await get(bought.auth).expect(200);
    expect(empty.body.data).toEqual({
      enabled: false,
      triggerType: null,
      triggerAmount: null,
      purchaseType: null,
      purchaseAmount: null,
      capType: null,
      capAmount: null,
      monthlyUsage: {
        purchases: 0,
        credits: 0,
        amountCents: 0,
        periodStart: expect.any(String),
        periodEnd: expect.any(String),
      },
      pricePerCredit: 0.075,
      hasPaymentMethod: true,
      consecutiveFailures: 0,
      disabledReason: null,
    });
    const on = await patch(bought.auth, { ...ENABLE, capType: "dollars", capAmount: 150 }).expect(200);
    expect(on.body.data).toMatchObject({
      enabled: true,
      triggerType: "credits",
      triggerAmount: 100,
      purchaseType: "credits",
      purchaseAmount: 500,
      capType: "dollars",
      capAmount: 150,
    });
    expect((await get(bought.auth).expect(200)).body.data).toEqual(on.body.data);
    // The whole configuration is replaced: no cap sent, no cap kept.
    const dollars = await patch(bought.auth, {
      enabled: true,
      triggerType: "dollars",
      triggerAmount: 7.5,
      purchaseType: "dollars",
      purchaseAmount: 20.25,
    }).expect(200);
    expect(dollars.body.data).toMatchObject({
      enabled: true,
      triggerType: "dollars",
      triggerAmount: 7.5,
      purchaseType: "dollars",
      purchaseAmount: 20.25,
      capType: null,
      capAmount: null,
    });
    const off = await patch(bought.auth, { enabled: false, triggerType: "credits" }).expect(200);
    expect(off.body.data).toEqual(empty.body.data);
    // Turning off what is already off is fine.
    await patch(bought.auth, { enabled: false }).expect(200);
  });

  it.each([
    ["enabled alone", { enabled: true }, ["triggerType", "triggerAmount", "purchaseType", "purchaseAmount"]],
    ["a null trigger", { ...ENABLE, triggerAmount: null }, ["triggerAmount"]],
    ["fewer than 100 credits", { ...ENABLE, purchaseAmount: 99 }, ["purchaseAmount"]],
    ["less than a dollar", { ...ENABLE, purchaseType: "dollars", purchaseAmount: 0.99 }, ["purchaseAmount"]],
    ["part of a credit", { ...ENABLE, purchaseAmount: 150.5 }, ["purchaseAmount"]],
    ["part of a cent", { ...ENABLE, triggerType: "dollars", triggerAmount: 1.005 }, ["triggerAmount"]],
    ["a zero trigger", { ...ENABLE, triggerAmount: 0 }, ["triggerAmount"]],
    ["more than 5 times the monthly credits", { ...ENABLE, purchaseAmount: 10_001 }, ["purchaseAmount"]],
    [
      "more than their dollar value",
      { ...ENABLE, purchaseType: "dollars", purchaseAmount: 751 },
      ["purchaseAmount"],
    ],
    ["a trigger above the limit", { ...ENABLE, triggerAmount: 10_001 }, ["triggerAmount"]],
    ["a cap type without an amount", { ...ENABLE, capType: "credits" }, ["capAmount"]],
    ["a cap amount without a type", { ...ENABLE, capAmount: 1000 }, ["capType"]],
    ["a cap below one purchase", { ...ENABLE, capType: "credits", capAmount: 499 }, ["capAmount"]],
    ["a dollar cap below one purchase", { ...ENABLE, capType: "dollars", capAmount: 37.49 }, ["capAmount"]],
  ])("400 validation_error for %s; nothing changes", async (_label, body, fields) => {
    const bought = await buy(b, { plan: "growth", trial: false });
    const before = (await patch(bought.auth, { ...ENABLE, purchaseAmount: 200 }).expect(200)).body.data;
    const res = await patch(bought.auth, body).expect(400);
    expect(res.body.error).toBe("validation_error");
    expect(res.body.details.map((d: { path: string[] }) => d.path)).toEqual(fields.map((f) => ["body", f]));
    expect((await get(bought.auth).expect(200)).body.data).toEqual(before);
  });

  it.each([
    ["no enabled", { triggerType: "credits" }],
    ["enabled not a boolean", { ...ENABLE, enabled: "yes" }],
    ["an unknown unit", { ...ENABLE, purchaseType: "euros" }],
    ["a negative amount", { ...ENABLE, purchaseAmount: -500 }],
    ["a text amount", { ...ENABLE, triggerAmount: "100" }],
  ])("400 validation_error for %s (the contract)", async (_label, body) => {
    const bought = await buy(b, { plan: "starter", trial: false });
    const res = await patch(bought.auth, body).expect(400);
    expect(res.body).toMatchObject({ error: "validation_error", message: expect.any(String) });
    expect((await get(bought.auth).expect(200)).body.data.enabled).toBe(false);
  });

  it("400 bad_request during a trial, and without a saved payment method", async () => {
    const trialing = await buy(b, { plan: "growth" });
    const trial = await patch(trialing.auth, ENABLE).expect(400);
    expect(trial.body).toEqual({ error: "bad_request", message: expect.stringContaining("trial") });
    await patch(trialing.auth, { enabled: false }).expect(200);
    // An account never linked to the payment processor has no payment method.
    const unlinked = await buildAccount(b.t.ctx.db, { plan: "scale" });
    const view = (await get(unlinked.auth).expect(200)).body.data;
    expect(view).toMatchObject({ hasPaymentMethod: false, pricePerCredit: 0.05 });
    const none = await patch(unlinked.auth, ENABLE).expect(400);
    expect(none.body).toEqual({ error: "bad_request", message: expect.stringContaining("payment method") });
    // A payment method removed at the processor's side.
    const bought = await buy(b, { plan: "growth", trial: false });
    await b.t.ctx.db
      .updateTable("billing_customers")
      .set({ payment_method_id: null })
      .where("account_id", "=", bought.accountId)
      .execute();
    expect((await patch(bought.auth, ENABLE).expect(400)).body.error).toBe("bad_request");
    expect((await get(bought.auth).expect(200)).body.data.enabled).toBe(false);
  });

  it("503 payment_unavailable when enabling without a payment processor", async () => {
    const bought = await buy(b, { plan: "growth", trial: false });
    await expect(updateAutoTopUp(b.t.ctx.db, undefined, bought.accountId, ENABLE)).rejects.toMatchObject({
      status: 503,
      code: "payment_unavailable",
    });
    expect((await get(bought.auth).expect(200)).body.data.enabled).toBe(false);
  });

  it("401 without, with an invalid or a revoked key; 403 for an unpaid account", async () => {
    const revoked = await buildAccount(b.t.ctx.db);
    await b.t.ctx.db
      .updateTable("api_keys")
      .set({ revoked_at: new Date() })
      .where("account_id", "=", revoked.accountId)
      .execute();
    const canceled = await buildAccount(b.t.ctx.db, { status: "canceled" });
    for (const send of [
      () => b.t.request().get("/api/v1/auto-top-up"),
      () => b.t.request().patch("/api/v1/auto-top-up"),
    ]) {
      for (const headers of [
        {},
        { Authorization: "Bearer svck_not_a_key_at_all_000000000000" },
        revoked.auth,
      ]) {
        const res = await send().set(headers).send(ENABLE);
        expect([res.status, res.body.error]).toEqual([401, "unauthorized"]);
      }
      const res = await send().set(canceled.auth).send(ENABLE);
      expect([res.status, res.body.error]).toEqual([403, "forbidden"]);
    }
    const settings = await b.t.ctx.db
      .selectFrom("auto_top_up_settings")
      .select("account_id")
      .where("account_id", "in", [revoked.accountId, canceled.accountId])
      .execute();
    expect(settings).toEqual([]);
  });

  it("one account never reads or changes another's auto top-up", async () => {
    const owner = await buy(b, { plan: "growth", trial: false });
    const other = await buy(b, { plan: "scale", trial: false });
    const mine = (await patch(owner.auth, ENABLE).expect(200)).body.data;
    expect((await get(other.auth).expect(200)).body.data).toMatchObject({
      enabled: false,
      pricePerCredit: 0.05,
    });
    await patch(other.auth, { enabled: false }).expect(200);
    await patch(other.auth, { ...ENABLE, purchaseAmount: 1000 }).expect(200);
    expect((await get(owner.auth).expect(200)).body.data).toEqual(mine);
  });
});

describe("purchases", () => {
  it("a charge crossing the trigger buys once; a new crossing buys again", async () => {
    const bought = await buy(b, { plan: "growth", trial: false });
    await buyCredits(bought, 200);
    await patch(bought.auth, ENABLE).expect(200);
    // Monthly credits are spent first: the permanent balance stays at 200.
    await useLeads(bought.accountId, 2000);
    await useLeads(bought.accountId, 50); // permanent 150, above the trigger
    expect(await queuedJobs(bought.accountId)).toBe(0);
    await useLeads(bought.accountId, 60); // permanent 90: crossed
    expect(await queuedJobs(bought.accountId)).toBe(1);
    await useLeads(bought.accountId, 10); // still below, already claimed
    expect(await queuedJobs(bought.accountId)).toBe(1);
    await runQueuedPurchases();
    expect(topUpsOf(bought)).toEqual([
      expect.objectContaining({
        amount: 3750,
        status: "succeeded",
        metadata: expect.objectContaining({ credits: "500" }),
      }),
    ]);
    expect(await me(bought)).toMatchObject({ permanentCredits: 580 });
    const ledger = await b.t.ctx.db
      .selectFrom("credit_ledger")
      .select(["bucket", "kind", "amount_tenths", "reference"])
      .where("account_id", "=", bought.accountId)
      .where("reason", "=", "auto_top_up")
      .execute();
    expect(ledger).toEqual([
      { bucket: "permanent", kind: "grant", amount_tenths: 5000, reference: topUpsOf(bought)[0]!.id },
    ]);
    // Above the trigger again: charges queue nothing.
    await useLeads(bought.accountId, 400); // permanent 180
    expect(await queuedJobs(bought.accountId)).toBe(0);
    // The processor's own success event for the payment grants nothing more.
    expect((await deliver(b, b.stripe.paymentSucceeded(topUpsOf(bought)[0]!.id))).status).toBe(200);
    expect(await me(bought)).toMatchObject({ permanentCredits: 180 });
    await useLeads(bought.accountId, 100); // permanent 80: a new crossing
    await runQueuedPurchases();
    expect(topUpsOf(bought)).toHaveLength(2);
    const view = (await get(bought.auth).expect(200)).body.data;
    expect(view.monthlyUsage).toMatchObject({ purchases: 2, credits: 1000, amountCents: 7500 });
    expect(view).toMatchObject({ enabled: true, consecutiveFailures: 0 });
  });

  it("a search (GET /leads) that leaves the permanent balance below the trigger buys", async () => {
    const bought = await buy(b, { plan: "starter", trial: false });
    await buyCredits(bought, 100);
    await patch(bought.auth, ENABLE).expect(200);
    await useLeads(bought.accountId, 500); // the monthly credits; permanent 100, not below
    const { word } = await buildWordLeads(b.t.ctx.db, 3);
    const res = await b.t
      .request()
      .get("/api/v1/leads")
      .query({ positiveKeywords: JSON.stringify([word]), limit: 3 })
      .set(bought.auth)
      .expect(200);
    expect(res.body.data.leads).toHaveLength(3);
    expect(await queuedJobs(bought.accountId)).toBe(1);
    await runQueuedPurchases();
    expect(topUpsOf(bought)).toEqual([expect.objectContaining({ amount: 5000, status: "succeeded" })]);
    expect(await me(bought)).toMatchObject({ permanentCredits: 597 });
  });

  it("concurrent charges crossing the trigger at once buy once", async () => {
    const bought = await buy(b, { plan: "starter", trial: false });
    await buyCredits(bought, 150);
    await patch(bought.auth, ENABLE).expect(200);
    await useLeads(bought.accountId, 500); // the monthly credits
    // Six charges of 20 at once: 150 -> 30, the trigger (100) crossed by whichever comes third.
    await Promise.all(Array.from({ length: 6 }, () => useLeads(bought.accountId, 20)));
    expect(await queuedJobs(bought.accountId)).toBe(1);
    // The purchase itself run twice at once (a job detached from its key while running) buys once.
    const results = await Promise.all([
      runAutoTopUp(b.t.ctx.db, processor(), bought.accountId),
      runAutoTopUp(b.t.ctx.db, processor(), bought.accountId),
    ]);
    expect(results.map((r) => r.outcome).sort()).toEqual(["nothing", "purchased"]);
    await runQueuedPurchases();
    expect(topUpsOf(bought)).toHaveLength(1);
    expect(await me(bought)).toMatchObject({ permanentCredits: 530 });
  });

  it("buys dollars' worth of credits at the plan's price; a dollar trigger compares the balance's value", async () => {
    const bought = await buy(b, { plan: "growth", trial: false });
    await patch(bought.auth, {
      enabled: true,
      triggerType: "dollars",
      triggerAmount: 10, // 133.4 credits at 7.5 cents
      purchaseType: "dollars",
      purchaseAmount: 10, // 133 credits, 9.98 USD
    }).expect(200);
    await buyCredits(bought, 140);
    await useLeads(bought.accountId, 2006); // permanent 134: worth 10.05 USD
    expect(await queuedJobs(bought.accountId)).toBe(0);
    await useLeads(bought.accountId, 1); // 133: worth 9.975 USD
    await runQueuedPurchases();
    expect(topUpsOf(bought)).toEqual([expect.objectContaining({ amount: 998 })]);
    expect(await me(bought)).toMatchObject({ permanentCredits: 266 });
  });

  it("never buys past the cap of the billing cycle; the next cycle buys again", async () => {
    const bought = await buy(b, { plan: "starter", trial: false });
    await patch(bought.auth, { ...ENABLE, purchaseAmount: 100, capType: "credits", capAmount: 250 }).expect(
      200,
    );
    await useLeads(bought.accountId, 450); // permanent 0 < 100
    await runQueuedPurchases();
    await useLeads(bought.accountId, 60); // monthly 50 and permanent 10: below again
    await runQueuedPurchases();
    expect(topUpsOf(bought)).toHaveLength(2);
    expect(await me(bought)).toMatchObject({ permanentCredits: 190 });
    await useLeads(bought.accountId, 100); // 90: a third purchase would make 300 > 250
    await runQueuedPurchases();
    expect(topUpsOf(bought)).toHaveLength(2);
    const capped = (await get(bought.auth).expect(200)).body.data;
    expect(capped.monthlyUsage).toMatchObject({ purchases: 2, credits: 200, amountCents: 2000 });
    // A dollar cap too: 20 USD is two purchases of 10 USD.
    await patch(bought.auth, { ...ENABLE, purchaseAmount: 100, capType: "dollars", capAmount: 20 }).expect(
      200,
    );
    await useLeads(bought.accountId, 1); // 89
    expect(await queuedJobs(bought.accountId)).toBe(1);
    await runQueuedPurchases();
    expect(topUpsOf(bought)).toHaveLength(2);
    // The renewal starts a new cycle.
    expect((await deliver(b, b.stripe.renew(bought.subscriptionId))).status).toBe(200);
    await useLeads(bought.accountId, 501); // the new monthly credits, then 1 permanent (88)
    await runQueuedPurchases();
    expect(topUpsOf(bought)).toHaveLength(3);
    expect((await get(bought.auth).expect(200)).body.data.monthlyUsage).toMatchObject({
      purchases: 1,
      credits: 100,
    });
  });

  it("five declines in a row turn it off and e-mail the owner; a decline waits an hour by default", async () => {
    const bought = await buy(b, { plan: "starter", trial: false });
    await patch(bought.auth, { ...ENABLE, purchaseAmount: 100 }).expect(200);
    b.stripe.declining.add(bought.customerId);
    try {
      taskDeps.retryDelayMs = undefined; // the default hour
      await useLeads(bought.accountId, 10);
      await runQueuedPurchases();
      expect((await get(bought.auth).expect(200)).body.data).toMatchObject({
        enabled: true,
        consecutiveFailures: 1,
      });
      await useLeads(bought.accountId, 10);
      expect(await queuedJobs(bought.accountId)).toBe(0);
      // With no wait, each later charge tries again.
      await b.t.ctx.db
        .updateTable("auto_top_up_settings")
        .set({ next_attempt_at: null })
        .where("account_id", "=", bought.accountId)
        .execute();
      taskDeps.retryDelayMs = 0;
      for (let attempt = 2; attempt <= 5; attempt += 1) {
        await useLeads(bought.accountId, 10);
        expect(await queuedJobs(bought.accountId), `attempt ${attempt}`).toBe(1);
        await runQueuedPurchases();
      }
    } finally {
      b.stripe.declining.delete(bought.customerId);
      taskDeps.retryDelayMs = 0;
    }
    const declined = topUpsOf(bought);
    expect(declined).toHaveLength(5);
    expect(declined.every((p) => p.status === "requires_payment_method")).toBe(true);
    const view = (await get(bought.auth).expect(200)).body.data;
    expect(view).toMatchObject({
      enabled: false,
      disabledReason: "payment_declined",
      consecutiveFailures: 5,
      purchaseAmount: 100,
      monthlyUsage: { purchases: 0, credits: 0, amountCents: 0 },
    });
    expect(await me(bought)).toMatchObject({ permanentCredits: 0 });
    const mail = await b.smtp.waitFor(
      (m) => m.to.includes(bought.email) && m.subject === "Auto top-up was turned off",
      10_000,
    );
    expect(mail.text).toContain("declined 5 times");
    // Off: no more attempts.
    await useLeads(bought.accountId, 10);
    expect(await queuedJobs(bought.accountId)).toBe(0);
    // Turned on again, it buys.
    await patch(bought.auth, { ...ENABLE, purchaseAmount: 100 }).expect(200);
    await useLeads(bought.accountId, 10);
    await runQueuedPurchases();
    expect(topUpsOf(bought).filter((p) => p.status === "succeeded")).toHaveLength(1);
    expect((await get(bought.auth).expect(200)).body.data).toMatchObject({
      enabled: true,
      disabledReason: null,
    });
  });

  it("a processor that is down keeps the claim; the retried job charges once with the same key", async () => {
    const bought = await buy(b, { plan: "starter", trial: false });
    await patch(bought.auth, { ...ENABLE, purchaseAmount: 100 }).expect(200);
    await useLeads(bought.accountId, 10);
    b.stripe.down = true;
    try {
      await expect(runAutoTopUp(b.t.ctx.db, processor(), bought.accountId)).rejects.toThrow();
    } finally {
      b.stripe.down = false;
    }
    expect((await get(bought.auth).expect(200)).body.data.consecutiveFailures).toBe(0);
    expect(await runAutoTopUp(b.t.ctx.db, processor(), bought.accountId)).toMatchObject({
      outcome: "purchased",
    });
    await runQueuedPurchases();
    expect(topUpsOf(bought)).toHaveLength(1);
    expect(await me(bought)).toMatchObject({ permanentCredits: 100 });
  });

  it("buys nothing while a downgrade is pending", async () => {
    const bought = await buy(b, { plan: "scale", trial: false });
    await patch(bought.auth, ENABLE).expect(200);
    await b.t.ctx.db
      .updateTable("billing_customers")
      .set({ pending_plan: "starter" })
      .where("account_id", "=", bought.accountId)
      .execute();
    await useLeads(bought.accountId, 10);
    expect(await runAutoTopUp(b.t.ctx.db, processor(), bought.accountId)).toEqual({
      outcome: "downgrade_pending",
    });
    expect(topUpsOf(bought)).toEqual([]);
  });

  it("top-up first, then the overage budget", async () => {
    const bought = await buy(b, { plan: "starter", trial: false });
    await b.t
      .request()
      .patch("/api/v1/overage-budget")
      .set(bought.auth)
      .send({ budgetType: "credits", budgetAmount: 50 })
      .expect(200);
    await patch(bought.auth, { ...ENABLE, purchaseAmount: 100, capType: "credits", capAmount: 100 }).expect(
      200,
    );
    await useLeads(bought.accountId, 450); // monthly 50 left, permanent 0: buys 100
    await runQueuedPurchases();
    await useLeads(bought.accountId, 140); // monthly 50 + permanent 90: no overage
    const overage = async () =>
      (await b.t.request().get("/api/v1/overage-budget").set(bought.auth)).body.data as {
        usedCredits: number;
      };
    expect((await overage()).usedCredits).toBe(0);
    await runQueuedPurchases(); // capped: nothing bought
    await useLeads(bought.accountId, 25); // permanent 10, then 15 of overage
    expect((await overage()).usedCredits).toBe(15);
    expect(topUpsOf(bought)).toHaveLength(1);
  });
});
