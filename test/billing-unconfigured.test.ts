import { describe, expect, it } from "vitest";
import { buildAccount } from "./helpers/factories.js";
import { freshEmail, freshIp, useBillingApp } from "./helpers/stripe-server.js";

// Without STRIPE_SECRET_KEY the money endpoints answer 503 payment_unavailable and nothing
// changes: no checkout, no charge, no call to the processor.

const b = useBillingApp({ stripe: false });

describe("payments not configured", () => {
  it("answers 503 payment_unavailable on every money endpoint and changes nothing", async () => {
    const account = await buildAccount(b.t.ctx.db, { plan: "growth" });
    await b.t.ctx.db
      .insertInto("billing_customers")
      .values({
        account_id: account.accountId,
        customer_id: "cus_x",
        subscription_id: "sub_x",
        payment_method_id: "pm_x",
      })
      .execute();
    const answers = [
      await b.t
        .request()
        .post("/api/v1/purchase")
        .set("X-Forwarded-For", freshIp())
        .send({ email: freshEmail(), plan: "growth" }),
      await b.t.request().post("/api/v1/purchase-credits").set(account.auth).send({ creditCount: 100 }),
      await b.t.request().post("/api/v1/subscription/cancel").set(account.auth),
      await b.t
        .request()
        .post("/api/v1/subscription/change-plan")
        .set(account.auth)
        .send({ targetPlan: "scale" }),
      await b.t
        .request()
        .post("/api/v1/payments/webhook")
        .set("Stripe-Signature", "t=1,v1=00")
        .set("Content-Type", "application/json")
        .send({ id: "evt_1", type: "invoice.paid", data: { object: {} } }),
    ];
    for (const [i, res] of answers.entries()) {
      expect(res.status, `request ${i}`).toBe(503);
      expect(res.body.error).toBe("payment_unavailable");
    }
    expect(b.stripe.requests).toEqual([]);
    const checkouts = await b.t.ctx.db.selectFrom("billing_checkouts").selectAll().execute();
    expect(checkouts).toEqual([]);
    const me = await b.t.request().get("/api/v1/me").set(account.auth);
    expect(me.body.data).toMatchObject({ subscriptionPlan: "growth", totalCreditsRemaining: 2000 });
    const customer = await b.t.ctx.db.selectFrom("billing_customers").selectAll().executeTakeFirstOrThrow();
    expect(customer.cancel_at_period_end).toBe(false);
    // Reading the overage budget needs no processor.
    expect((await b.t.request().get("/api/v1/overage-budget").set(account.auth)).status).toBe(200);
  });

  it("still answers 400 for invalid input before anything else", async () => {
    const res = await b.t
      .request()
      .post("/api/v1/purchase")
      .set("X-Forwarded-For", freshIp())
      .send({ email: "nope", plan: "growth" });
    expect([res.status, res.body.error]).toEqual([400, "invalid_email"]);
  });
});
