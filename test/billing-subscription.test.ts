import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { buildAccount } from "./helpers/factories.js";
import { buy, deliver, useBillingApp } from "./helpers/stripe-server.js";

// The subscription after purchase, driven from the local Stripe server: renewals (rollover),
// declines, downgrades at renewal, upgrades, trial switch and activation, cancellation and the
// forfeit at the end, every event delivered twice.

const b = useBillingApp();

const me = async (auth: { Authorization: string }) =>
  (await b.t.request().get("/api/v1/me").set(auth)).body.data as Record<string, unknown>;

const changePlan = (auth: { Authorization: string }, body: Record<string, unknown>) =>
  b.t.request().post("/api/v1/subscription/change-plan").set(auth).send(body);

/** Spends credits of the account through the ledger (as a search would). */
async function spend(accountId: number, credits: number) {
  await b.t.ctx.db
    .insertInto("credit_ledger")
    .values({
      account_id: accountId,
      bucket: "monthly",
      kind: "charge",
      amount_tenths: -credits * 10,
      reason: "lead_search",
    })
    .execute();
}

async function twice(event: Parameters<typeof deliver>[1]) {
  expect((await deliver(b, event)).status).toBe(200);
  expect((await deliver(b, event)).status).toBe(200);
}

describe("renewals", () => {
  it("grants the monthly credits at renewal; unused ones roll over; a repeat grants nothing", async () => {
    const bought = await buy(b, { plan: "starter", trial: false });
    await spend(bought.accountId, 200);
    await twice(b.stripe.renew(bought.subscriptionId));
    expect(await me(bought.auth)).toMatchObject({
      subscriptionStatus: "active",
      monthlyCredits: 800,
      monthlyCreditsUsed: 0,
      monthlyCreditsRemaining: 800,
    });
  });

  it("the end of the trial is the first charge: active with the full monthly credits", async () => {
    const bought = await buy(b, { plan: "growth" });
    expect(await me(bought.auth)).toMatchObject({ subscriptionStatus: "trialing", monthlyCredits: 1000 });
    await twice(b.stripe.renew(bought.subscriptionId));
    expect(await me(bought.auth)).toMatchObject({
      subscriptionStatus: "active",
      totalCreditsRemaining: 3000,
    });
  });

  it("a declined renewal refuses API access until an invoice is paid", async () => {
    const bought = await buy(b, { plan: "starter", trial: false });
    await twice(b.stripe.failRenewal(bought.subscriptionId));
    const refused = await b.t.request().get("/api/v1/me").set(bought.auth);
    expect(refused.status).toBe(403);
    await twice(b.stripe.renew(bought.subscriptionId));
    expect(await me(bought.auth)).toMatchObject({
      subscriptionStatus: "active",
      totalCreditsRemaining: 1000,
    });
  });
});

describe("POST /subscription/cancel", () => {
  it("cancels at period end, repeat harmless; the end forfeits the balance and refuses the key", async () => {
    const bought = await buy(b, { plan: "growth", trial: false });
    const res = await b.t.request().post("/api/v1/subscription/cancel").set(bought.auth);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: "active", plan: "growth", cancelAtPeriodEnd: true });
    expect(res.body.data.currentPeriodEnd).not.toBeNull();
    expect(b.stripe.subscriptions.get(bought.subscriptionId)!.cancel_at_period_end).toBe(true);
    const requests = b.stripe.requests.length;
    const again = await b.t.request().post("/api/v1/subscription/cancel").set(bought.auth);
    expect(again.status).toBe(200);
    expect(again.body.data.cancelAtPeriodEnd).toBe(true);
    expect(b.stripe.requests.length).toBe(requests);
    // Access continues until the end.
    expect(await me(bought.auth)).toMatchObject({ isSubscribed: true, totalCreditsRemaining: 2000 });
    await twice(b.stripe.endSubscription(bought.subscriptionId));
    expect((await b.t.request().get("/api/v1/me").set(bought.auth)).status).toBe(403);
    const sums = await b.t.ctx.db
      .selectFrom("credit_ledger")
      .select(sql<string>`sum(amount_tenths)`.as("left"))
      .where("account_id", "=", bought.accountId)
      .executeTakeFirstOrThrow();
    expect(Number(sums.left)).toBe(0);
    // A late renewal of the ended subscription grants nothing.
    await twice(b.stripe.renew(bought.subscriptionId));
    const after = await b.t.ctx.db
      .selectFrom("accounts")
      .select("subscription_status")
      .where("id", "=", bought.accountId)
      .executeTakeFirstOrThrow();
    expect(after.subscription_status).toBe("canceled");
  });

  it("401 without a key; another account's subscription is untouched", async () => {
    expect((await b.t.request().post("/api/v1/subscription/cancel")).status).toBe(401);
    const one = await buy(b, { plan: "starter", trial: false });
    const two = await buy(b, { plan: "starter", trial: false });
    await b.t.request().post("/api/v1/subscription/cancel").set(one.auth);
    expect(b.stripe.subscriptions.get(two.subscriptionId)!.cancel_at_period_end).toBe(false);
  });
});

describe("POST /subscription/change-plan", () => {
  it("an upgrade is charged prorated now and grants the difference of the allowances", async () => {
    const bought = await buy(b, { plan: "growth", trial: false });
    const res = await changePlan(bought.auth, { targetPlan: "scale" });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      previousPlan: "growth",
      targetPlan: "scale",
      subscriptionPlan: "scale",
      change: "upgrade",
      totalCreditsRemaining: 10_000,
    });
    // About a full period left: close to the difference of the two prices (49,900 - 14,900).
    expect(res.body.data.amountChargedCents).toBeGreaterThan(34_000);
    expect(res.body.data.amountChargedCents).toBeLessThanOrEqual(35_000);
    expect(await me(bought.auth)).toMatchObject({ subscriptionPlan: "scale", monthlyCredits: 10_000 });
  });

  it("402 payment_declined on an upgrade changes nothing", async () => {
    const bought = await buy(b, { plan: "growth", trial: false });
    b.stripe.declining.add(bought.customerId);
    try {
      const res = await changePlan(bought.auth, { targetPlan: "platinum" });
      expect(res.status).toBe(402);
      expect(res.body.error).toBe("payment_declined");
    } finally {
      b.stripe.declining.delete(bought.customerId);
    }
    expect(await me(bought.auth)).toMatchObject({ subscriptionPlan: "growth", totalCreditsRemaining: 2000 });
    expect(b.stripe.subscriptions.get(bought.subscriptionId)!.price).toBe("price_growth");
  });

  it("a downgrade waits for the renewal, when the balance expires and the new allowance starts", async () => {
    const bought = await buy(b, { plan: "growth", trial: false });
    await b.t.request().post("/api/v1/purchase-credits").set(bought.auth).send({ creditCount: 100 });
    const res = await changePlan(bought.auth, { targetPlan: "starter" });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      subscriptionPlan: "growth",
      change: "downgrade",
      amountChargedCents: 0,
    });
    expect(b.stripe.subscriptions.get(bought.subscriptionId)!.price).toBe("price_starter");
    expect(await me(bought.auth)).toMatchObject({ subscriptionPlan: "growth", totalCreditsRemaining: 2100 });
    await twice(b.stripe.renew(bought.subscriptionId));
    expect(await me(bought.auth)).toMatchObject({
      subscriptionPlan: "starter",
      monthlyCredits: 500,
      permanentCredits: 0,
      totalCreditsRemaining: 500,
    });
  });

  it("during a trial: switch_trial charges nothing; the allowance is half the new plan minus used", async () => {
    const bought = await buy(b, { plan: "growth" });
    await spend(bought.accountId, 300);
    const res = await changePlan(bought.auth, { targetPlan: "scale" });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      change: "trial_switch",
      subscriptionPlan: "scale",
      subscriptionStatus: "trialing",
      amountChargedCents: 0,
    });
    expect(await me(bought.auth)).toMatchObject({ subscriptionPlan: "scale", monthlyCreditsRemaining: 4700 });
    const down = await changePlan(bought.auth, { targetPlan: "starter", mode: "switch_trial" });
    expect(down.status).toBe(200);
    expect(await me(bought.auth)).toMatchObject({ subscriptionPlan: "starter", monthlyCreditsRemaining: 0 });
  });

  it("during a trial: activate_now charges the full price; trial credits left become permanent", async () => {
    const bought = await buy(b, { plan: "starter" });
    await spend(bought.accountId, 50);
    const res = await changePlan(bought.auth, { targetPlan: "growth", mode: "activate_now" });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      change: "trial_activation",
      subscriptionStatus: "active",
      amountChargedCents: 14_900,
    });
    expect(await me(bought.auth)).toMatchObject({
      subscriptionPlan: "growth",
      subscriptionStatus: "active",
      permanentCredits: 200,
      monthlyCreditsRemaining: 2000,
    });
  });

  it("errors: invalid_plan, same plan, mode outside a trial, retired plan, change in progress", async () => {
    const bought = await buy(b, { plan: "growth", trial: false });
    expect((await changePlan(bought.auth, { targetPlan: "gold" })).body.error).toBe("invalid_plan");
    const same = await changePlan(bought.auth, { targetPlan: "growth" });
    expect([same.status, same.body.error]).toEqual([400, "bad_request"]);
    const mode = await changePlan(bought.auth, { targetPlan: "scale", mode: "activate_now" });
    expect([mode.status, mode.body.error]).toEqual([400, "bad_request"]);
    expect((await changePlan(bought.auth, { targetPlan: "scale", mode: "later" })).body.error).toBe(
      "validation_error",
    );
    b.stripe.prices.get("scale")!.active = false;
    try {
      const retired = await changePlan(bought.auth, { targetPlan: "scale" });
      expect([retired.status, retired.body.error]).toEqual([410, "plan_retired"]);
    } finally {
      b.stripe.prices.get("scale")!.active = true;
    }
    // Another change of the account holds the lock: 409, nothing changed.
    await b.t.ctx.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext('billing-plan-change'), ${bought.accountId}::int)`.execute(
        trx,
      );
      const busy = await changePlan(bought.auth, { targetPlan: "scale" });
      expect([busy.status, busy.body.error]).toEqual([409, "plan_change_in_progress"]);
    });
    expect(await me(bought.auth)).toMatchObject({ subscriptionPlan: "growth" });
    const admin = await buildAccount(b.t.ctx.db);
    expect((await changePlan(admin.auth, { targetPlan: "scale" })).status).toBe(400);
  });
});

describe("overage budget", () => {
  it("GET shows no budget; PATCH sets, changes and disables it within 5x the plan", async () => {
    const bought = await buy(b, { plan: "starter", trial: false });
    const empty = await b.t.request().get("/api/v1/overage-budget").set(bought.auth);
    expect(empty.status).toBe(200);
    expect(empty.body.data).toMatchObject({
      enabled: false,
      budgetType: "dollars",
      budgetAmount: null,
      overageRate: 10,
      maxBudgetCredits: 2500,
      maxBudgetDollars: 250,
      hasPaymentMethod: true,
      usedCredits: 0,
    });
    const set = await b.t
      .request()
      .patch("/api/v1/overage-budget")
      .set(bought.auth)
      .send({ budgetAmount: 20 });
    expect(set.status).toBe(200);
    expect(set.body.data).toMatchObject({
      enabled: true,
      budgetType: "dollars",
      budgetAmount: 20,
      budgetCredits: 200,
      remainingCredits: 200,
    });
    const credits = await b.t
      .request()
      .patch("/api/v1/overage-budget")
      .set(bought.auth)
      .send({ budgetType: "credits", budgetAmount: 2500 });
    expect(credits.body.data).toMatchObject({
      budgetType: "credits",
      budgetAmount: 2500,
      budgetCredits: 2500,
    });
    const tooMuch = await b.t
      .request()
      .patch("/api/v1/overage-budget")
      .set(bought.auth)
      .send({ budgetAmount: 2501 });
    expect([tooMuch.status, tooMuch.body.error]).toEqual([400, "validation_error"]);
    const empty400 = await b.t.request().patch("/api/v1/overage-budget").set(bought.auth).send({});
    expect([empty400.status, empty400.body.error]).toEqual([400, "bad_request"]);
    const off = await b.t
      .request()
      .patch("/api/v1/overage-budget")
      .set(bought.auth)
      .send({ budgetAmount: null });
    expect(off.body.data).toMatchObject({ enabled: false, budgetAmount: null });
  });

  it("needs an active plan (not a trial) and a saved payment method; other accounts unaffected", async () => {
    const trialing = await buy(b, { plan: "growth" });
    const res = await b.t
      .request()
      .patch("/api/v1/overage-budget")
      .set(trialing.auth)
      .send({ budgetAmount: 10 });
    expect([res.status, res.body.error]).toEqual([400, "bad_request"]);
    const admin = await buildAccount(b.t.ctx.db);
    const noCard = await b.t
      .request()
      .patch("/api/v1/overage-budget")
      .set(admin.auth)
      .send({ budgetAmount: 10 });
    expect([noCard.status, noCard.body.error]).toEqual([400, "bad_request"]);
    expect(
      (await b.t.request().patch("/api/v1/overage-budget").set(admin.auth).send({ budgetAmount: 0 })).status,
    ).toBe(200);
    const active = await buy(b, { plan: "growth", trial: false });
    await b.t.request().patch("/api/v1/overage-budget").set(active.auth).send({ budgetAmount: 10 });
    const other = await b.t.request().get("/api/v1/overage-budget").set(trialing.auth);
    expect(other.body.data.enabled).toBe(false);
    expect((await b.t.request().get("/api/v1/overage-budget")).status).toBe(401);
  });
});

describe("keys and subscriptions on every keyed billing endpoint", () => {
  const calls: [string, string, Record<string, unknown> | undefined][] = [
    ["post", "/api/v1/purchase-credits", { creditCount: 100 }],
    ["get", "/api/v1/overage-budget", undefined],
    ["patch", "/api/v1/overage-budget", { budgetAmount: 0 }],
    ["post", "/api/v1/subscription/cancel", undefined],
    ["post", "/api/v1/subscription/change-plan", { targetPlan: "scale" }],
  ];
  const send = (method: string, path: string, body: unknown, headers: Record<string, string>) => {
    const agent = b.t.request();
    const req = agent[method as "post"](path).set(headers);
    return body === undefined ? req : req.send(body as object);
  };

  it("401 without, with an invalid or a revoked key; 403 for an account without a paid subscription", async () => {
    const revoked = await buildAccount(b.t.ctx.db);
    await b.t.ctx.db
      .updateTable("api_keys")
      .set({ revoked_at: new Date() })
      .where("account_id", "=", revoked.accountId)
      .execute();
    const canceled = await buildAccount(b.t.ctx.db, { status: "canceled" });
    for (const [method, path, body] of calls) {
      for (const headers of [
        {},
        { Authorization: "Bearer svck_not_a_key_at_all_000000000000" },
        revoked.auth,
      ]) {
        const res = await send(method, path, body, headers);
        expect([res.status, res.body.error], `${method} ${path}`).toEqual([401, "unauthorized"]);
      }
      const res = await send(method, path, body, canceled.auth);
      expect([res.status, res.body.error], `${method} ${path}`).toEqual([403, "forbidden"]);
    }
    expect(
      b.stripe.paymentIntents.filter((p) => p.metadata.account_id === String(canceled.accountId)),
    ).toEqual([]);
  });
});
