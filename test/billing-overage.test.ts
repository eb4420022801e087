import { describe, expect, it } from "vitest";
import { collectOverage } from "../src/billing/collect-overage.js";
import { createStripeProcessor } from "../src/billing/processor.js";
import { chargeDelivery } from "../src/credits/charge.js";
import { buy, useBillingApp, type Bought } from "./helpers/stripe-server.js";

// Overage: lead usage past the credits up to the budget through the one charging path, the daily
// collection with the processor's 50-cent minimum, the write-off at renewal, and five failed
// collections disabling the budget.

const b = useBillingApp();

/** Charges `leads` new leads through chargeDelivery, as a search would. */
async function useLeads(accountId: number, leads: number) {
  return b.t.ctx.db.transaction().execute((trx) =>
    chargeDelivery(trx, {
      accountId,
      reason: "lead_search",
      entryWait: "bounded",
      deliver: () => Promise.resolve({ lead: leads }),
    }),
  );
}

const processor = () =>
  createStripeProcessor({
    secretKey: b.stripe.secretKey,
    webhookSecret: b.stripe.webhookSecret,
    apiBase: b.stripe.apiBase,
  });

const overage = async (bought: Bought) =>
  (await b.t.request().get("/api/v1/overage-budget").set(bought.auth)).body.data as Record<string, unknown>;

const chargesOf = (bought: Bought) => b.stripe.paymentIntents.filter((p) => p.customer === bought.customerId);

describe("overage", () => {
  it("lets usage run past zero up to the budget, at the plan's rate, and no further", async () => {
    const bought = await buy(b, { plan: "starter", trial: false });
    await b.t
      .request()
      .patch("/api/v1/overage-budget")
      .set(bought.auth)
      .send({ budgetType: "credits", budgetAmount: 10 });
    await useLeads(bought.accountId, 500);
    await useLeads(bought.accountId, 4);
    expect(await overage(bought)).toMatchObject({ usedCredits: 4, remainingCredits: 6, accruedCents: 40 });
    const me = (await b.t.request().get("/api/v1/me").set(bought.auth)).body.data;
    expect(me).toMatchObject({ totalCreditsRemaining: 0, overageCreditsRemaining: 6 });
    await expect(useLeads(bought.accountId, 7)).rejects.toMatchObject({
      status: 402,
      code: "insufficient_credits",
    });
    await useLeads(bought.accountId, 6);
    expect(await overage(bought)).toMatchObject({ usedCredits: 10, remainingCredits: 0, accruedCents: 100 });
  });

  it("collects daily once 50 cents are reached; a smaller remainder is written off at renewal", async () => {
    const bought = await buy(b, { plan: "starter", trial: false });
    await b.t.request().patch("/api/v1/overage-budget").set(bought.auth).send({ budgetAmount: 5 });
    await useLeads(bought.accountId, 504); // 4 credits of overage: 40 cents
    await collectOverage(b.t.ctx.db, processor());
    expect(chargesOf(bought)).toHaveLength(0);
    await useLeads(bought.accountId, 2); // 60 cents
    const results = await collectOverage(b.t.ctx.db, processor());
    expect(results.find((r) => r.accountId === bought.accountId)).toMatchObject({
      outcome: "charged",
      amountCents: 60,
    });
    expect(chargesOf(bought)).toEqual([expect.objectContaining({ amount: 60, status: "succeeded" })]);
    // A second run charges nothing more.
    await collectOverage(b.t.ctx.db, processor());
    expect(chargesOf(bought)).toHaveLength(1);
    expect(await overage(bought)).toMatchObject({ usedCredits: 6, accruedCents: 0 });
    await useLeads(bought.accountId, 3); // 30 cents, below the minimum
    expect(await overage(bought)).toMatchObject({ accruedCents: 30 });
    const renewal = b.stripe.renew(bought.subscriptionId);
    const { signature, body } = b.stripe.signed(renewal);
    await b.t
      .request()
      .post("/api/v1/payments/webhook")
      .set("Content-Type", "application/json")
      .set("Stripe-Signature", signature)
      .send(body);
    // Written off; the budget reset for the new period.
    expect(await overage(bought)).toMatchObject({
      usedCredits: 0,
      accruedCents: 0,
      remainingCredits: 50,
      enabled: true,
    });
    await collectOverage(b.t.ctx.db, processor());
    expect(chargesOf(bought)).toHaveLength(1);
  });

  it("five failed collections disable the budget", async () => {
    const bought = await buy(b, { plan: "starter", trial: false });
    await b.t.request().patch("/api/v1/overage-budget").set(bought.auth).send({ budgetAmount: 10 });
    await useLeads(bought.accountId, 510);
    b.stripe.declining.add(bought.customerId);
    try {
      for (let i = 1; i <= 4; i += 1) {
        const results = await collectOverage(b.t.ctx.db, processor());
        expect(results.find((r) => r.accountId === bought.accountId)?.outcome).toBe("failed");
      }
      expect(await overage(bought)).toMatchObject({ enabled: true });
      const fifth = await collectOverage(b.t.ctx.db, processor());
      expect(fifth.find((r) => r.accountId === bought.accountId)?.outcome).toBe("disabled");
    } finally {
      b.stripe.declining.delete(bought.customerId);
    }
    expect(await overage(bought)).toMatchObject({ enabled: false, accruedCents: 100 });
    await expect(useLeads(bought.accountId, 1)).rejects.toMatchObject({ status: 402 });
    // The accrued overage is still collected once the card works again.
    const later = await collectOverage(b.t.ctx.db, processor());
    expect(later.find((r) => r.accountId === bought.accountId)).toMatchObject({
      outcome: "charged",
      amountCents: 100,
    });
  });

  it("the subscription's end forfeits the overage allowance too", async () => {
    const bought = await buy(b, { plan: "starter", trial: false });
    await b.t.request().patch("/api/v1/overage-budget").set(bought.auth).send({ budgetAmount: 10 });
    const ended = b.stripe.endSubscription(bought.subscriptionId);
    const { signature, body } = b.stripe.signed(ended);
    await b.t
      .request()
      .post("/api/v1/payments/webhook")
      .set("Content-Type", "application/json")
      .set("Stripe-Signature", signature)
      .send(body);
    await expect(useLeads(bought.accountId, 1)).rejects.toMatchObject({ status: 402 });
  });
});

describe("PATCH /overage-budget with enabled (the real service's form)", () => {
  const patch = (bought: Bought, body: object) =>
    b.t.request().patch("/api/v1/overage-budget").set(bought.auth).send(body);

  it("enabled true sets the budget (dollars by default); enabled false turns it off and clears it", async () => {
    const bought = await buy(b, { plan: "starter", trial: false });
    // An earlier budget in credits: the real form's omitted budgetType still means dollars.
    await patch(bought, { budgetType: "credits", budgetAmount: 30 }).expect(200);
    const on = await patch(bought, { enabled: true, budgetAmount: 20 }).expect(200);
    expect(on.body.data).toMatchObject({
      enabled: true,
      budgetType: "dollars",
      budgetAmount: 20,
      budgetCredits: 200,
      remainingCredits: 200,
    });
    const credits = await patch(bought, { enabled: true, budgetType: "credits", budgetAmount: 10 }).expect(
      200,
    );
    expect(credits.body.data).toMatchObject({ enabled: true, budgetType: "credits", budgetAmount: 10 });
    await useLeads(bought.accountId, 506); // 6 credits of overage: 60 cents
    const off = await patch(bought, { enabled: false }).expect(200);
    expect(off.body.data).toMatchObject({
      enabled: false,
      budgetType: "dollars",
      budgetAmount: null,
      budgetCredits: null,
      remainingCredits: null,
      usedCredits: 6,
      accruedCents: 60,
    });
    expect(await overage(bought)).toEqual(off.body.data);
    // No more overage; what was used is still collected.
    await expect(useLeads(bought.accountId, 1)).rejects.toMatchObject({ status: 402 });
    const results = await collectOverage(b.t.ctx.db, processor());
    expect(results.find((r) => r.accountId === bought.accountId)).toMatchObject({
      outcome: "charged",
      amountCents: 60,
    });
    // Disabling again, or with an amount of 0 or null beside it, is fine.
    await patch(bought, { enabled: false, budgetAmount: 0 }).expect(200);
    await patch(bought, { enabled: false, budgetAmount: null, budgetType: "credits" }).expect(200);
  });

  it.each([
    ["enabled false with an amount", { enabled: false, budgetAmount: 10 }],
    ["enabled true without an amount", { enabled: true }],
    ["enabled true with an amount of 0", { enabled: true, budgetAmount: 0 }],
    ["enabled true with a null amount", { enabled: true, budgetType: "credits", budgetAmount: null }],
  ])("refuses %s with 400 validation_error and changes nothing", async (_label, body) => {
    const bought = await buy(b, { plan: "starter", trial: false });
    await patch(bought, { budgetAmount: 7 }).expect(200);
    const res = await patch(bought, body).expect(400);
    expect(res.body.error).toBe("validation_error");
    expect(res.body.details).toEqual([{ path: ["body", "budgetAmount"], message: expect.any(String) }]);
    expect(await overage(bought)).toMatchObject({ enabled: true, budgetType: "dollars", budgetAmount: 7 });
  });

  it("refuses enabled that is not a boolean, and keeps the rules of enabling", async () => {
    const bought = await buy(b, { plan: "starter", trial: false });
    const res = await patch(bought, { enabled: "yes", budgetAmount: 5 }).expect(400);
    expect(res.body.error).toBe("validation_error");
    const tooMuch = await patch(bought, { enabled: true, budgetAmount: 251 }).expect(400);
    expect(tooMuch.body.error).toBe("validation_error");
    const trialing = await buy(b, { plan: "growth" });
    const trial = await patch(trialing, { enabled: true, budgetAmount: 5 }).expect(400);
    expect(trial.body.error).toBe("bad_request");
    await patch(trialing, { enabled: false }).expect(200);
    expect(await overage(bought)).toMatchObject({ enabled: false });
  });
});
