import { describe, expect, it } from "vitest";
import { buildAccount } from "./helpers/factories.js";
import { buy, deliver, useBillingApp, type Bought } from "./helpers/stripe-server.js";

// POST /purchase-credits: off-session charges at the local Stripe server, permanent credits
// granted once paid, declines, the Idempotency-Key, and the processor's own success event.

const b = useBillingApp();

const purchaseCredits = (auth: { Authorization: string }, creditCount: unknown, key?: string) => {
  const req = b.t.request().post("/api/v1/purchase-credits").set(auth);
  if (key) req.set("Idempotency-Key", key);
  return req.send({ creditCount });
};

const me = async (auth: { Authorization: string }) =>
  (await b.t.request().get("/api/v1/me").set(auth)).body.data as Record<string, unknown>;

const chargesOf = (bought: Bought) => b.stripe.paymentIntents.filter((p) => p.customer === bought.customerId);

describe("POST /purchase-credits", () => {
  it("charges the plan's price per credit off-session and adds permanent credits", async () => {
    const growth = await buy(b, { plan: "growth", trial: false });
    const res = await purchaseCredits(growth.auth, 150);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      creditsPurchased: 150,
      pricePerCreditCents: 7.5,
      amountCents: 1125,
      permanentCredits: 150,
      totalCreditsRemaining: 2150,
    });
    expect(chargesOf(growth)).toEqual([expect.objectContaining({ amount: 1125, status: "succeeded" })]);
    expect(await me(growth.auth)).toMatchObject({ permanentCredits: 150, totalCreditsRemaining: 2150 });
    const ledger = await b.t.ctx.db
      .selectFrom("credit_ledger")
      .select(["bucket", "kind", "amount_tenths", "reason", "reference"])
      .where("account_id", "=", growth.accountId)
      .where("reason", "=", "credit_purchase")
      .execute();
    expect(ledger).toEqual([
      {
        bucket: "permanent",
        kind: "grant",
        amount_tenths: 1500,
        reason: "credit_purchase",
        reference: chargesOf(growth)[0]!.id,
      },
    ]);
    // The processor's own success event for the same payment grants nothing more.
    expect((await deliver(b, b.stripe.paymentSucceeded(chargesOf(growth)[0]!.id))).status).toBe(200);
    expect(await me(growth.auth)).toMatchObject({ permanentCredits: 150 });
  });

  it("prices: starter 10, scale 5, platinum 3, enterprise 2 cents", async () => {
    for (const [plan, cents] of [
      ["starter", 10],
      ["scale", 5],
      ["platinum", 3],
      ["enterprise", 2],
    ] as const) {
      const bought = await buy(b, { plan, trial: false });
      const res = await purchaseCredits(bought.auth, 101);
      expect(res.body.data, plan).toMatchObject({ pricePerCreditCents: cents, amountCents: 101 * cents });
    }
  });

  it("402 payment_declined on a declined card; nothing is added", async () => {
    const bought = await buy(b, { plan: "starter", trial: false });
    b.stripe.declining.add(bought.customerId);
    try {
      const res = await purchaseCredits(bought.auth, 100);
      expect(res.status).toBe(402);
      expect(res.body.error).toBe("payment_declined");
      expect(await me(bought.auth)).toMatchObject({ permanentCredits: 0, totalCreditsRemaining: 500 });
    } finally {
      b.stripe.declining.delete(bought.customerId);
    }
  });

  it("an Idempotency-Key repeat answers the first answer; two concurrent requests charge once", async () => {
    const bought = await buy(b, { plan: "growth", trial: false });
    const [one, two] = await Promise.all([
      purchaseCredits(bought.auth, 200, "same-key-0001"),
      purchaseCredits(bought.auth, 200, "same-key-0001"),
    ]);
    expect(one.status).toBe(200);
    expect(two.status).toBe(200);
    expect(two.body).toEqual(one.body);
    const again = await purchaseCredits(bought.auth, 200, "same-key-0001");
    expect(again.body).toEqual(one.body);
    expect(chargesOf(bought)).toHaveLength(1);
    expect(await me(bought.auth)).toMatchObject({ permanentCredits: 200 });
    const reused = await purchaseCredits(bought.auth, 300, "same-key-0001");
    expect(reused.status).toBe(409);
    expect(reused.body.error).toBe("idempotency_key_reused");
    // Another key is another purchase.
    expect((await purchaseCredits(bought.auth, 200, "other-key-0002")).status).toBe(200);
    expect(chargesOf(bought)).toHaveLength(2);
    // A declined first answer is repeated too, without charging again.
    b.stripe.declining.add(bought.customerId);
    try {
      expect((await purchaseCredits(bought.auth, 100, "declined-key-03")).status).toBe(402);
    } finally {
      b.stripe.declining.delete(bought.customerId);
    }
    const repeat = await purchaseCredits(bought.auth, 100, "declined-key-03");
    expect(repeat.status).toBe(402);
    expect(chargesOf(bought)).toHaveLength(3);
  });

  it("a retry with the same Idempotency-Key after the charge went through but our commit did not charges once", async () => {
    // What a crash between the processor's charge and the transaction's commit leaves: the card
    // charged, our payment row and credits rolled back. A trigger fails the commit's last step once.
    const bought = await buy(b, { plan: "growth", trial: false });
    const { sql } = await import("kysely");
    await sql`
      create or replace function fail_credit_purchase_once() returns trigger language plpgsql as $$
      begin
        if new.status = 'succeeded' and new.account_id = ${sql.lit(bought.accountId)} then
          raise exception 'the process died before the commit';
        end if;
        return new;
      end $$`.execute(b.t.ctx.db);
    await sql`create trigger fail_credit_purchase_once before update on billing_payments
      for each row execute function fail_credit_purchase_once()`.execute(b.t.ctx.db);
    try {
      const lost = await purchaseCredits(bought.auth, 300, "crash-key-0004");
      expect(lost.status).toBeGreaterThanOrEqual(500);
    } finally {
      await sql`drop trigger fail_credit_purchase_once on billing_payments`.execute(b.t.ctx.db);
      await sql`drop function fail_credit_purchase_once()`.execute(b.t.ctx.db);
    }
    expect(chargesOf(bought)).toHaveLength(1);
    expect(await me(bought.auth)).toMatchObject({ permanentCredits: 0 });

    const retried = await purchaseCredits(bought.auth, 300, "crash-key-0004");
    expect(retried.status).toBe(200);
    expect(retried.body.data).toMatchObject({ creditsPurchased: 300, permanentCredits: 300 });
    // The processor answered the same payment: one charge, one grant.
    expect(chargesOf(bought)).toHaveLength(1);
    expect((await deliver(b, b.stripe.paymentSucceeded(chargesOf(bought)[0]!.id))).status).toBe(200);
    expect(await me(bought.auth)).toMatchObject({ permanentCredits: 300 });
  });

  it("400: fewer than 100, more than 5x the monthly credits, not a whole number, a bad key", async () => {
    const bought = await buy(b, { plan: "starter", trial: false });
    for (const count of [99, 2501, 100.5, "100", null]) {
      const res = await purchaseCredits(bought.auth, count);
      expect(res.status, String(count)).toBe(400);
      expect(res.body.error).toBe("validation_error");
    }
    expect((await purchaseCredits(bought.auth, 2500)).status).toBe(200);
    const badKey = await purchaseCredits(bought.auth, 100, "short");
    expect(badKey.status).toBe(400);
    expect(chargesOf(bought)).toHaveLength(1);
  });

  it("400 bad_request during a trial and without a saved payment method", async () => {
    const trialing = await buy(b, { plan: "growth" });
    const res = await purchaseCredits(trialing.auth, 100);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("bad_request");
    const admin = await buildAccount(b.t.ctx.db, { plan: "growth" });
    const noCard = await purchaseCredits(admin.auth, 100);
    expect(noCard.status).toBe(400);
    expect(noCard.body.error).toBe("bad_request");
    expect(chargesOf(trialing)).toHaveLength(0);
  });

  it("401 without, with an invalid or a revoked key; 403 without a paid subscription", async () => {
    expect((await b.t.request().post("/api/v1/purchase-credits").send({ creditCount: 100 })).status).toBe(
      401,
    );
    expect((await purchaseCredits({ Authorization: "Bearer svck_invalid" }, 100)).status).toBe(401);
    const revoked = await buildAccount(b.t.ctx.db);
    await b.t.ctx.db
      .updateTable("api_keys")
      .set({ revoked_at: new Date() })
      .where("account_id", "=", revoked.accountId)
      .execute();
    const res = await purchaseCredits(revoked.auth, 100);
    expect(res.status).toBe(401);
    const canceled = await buildAccount(b.t.ctx.db, { status: "canceled" });
    const forbidden = await purchaseCredits(canceled.auth, 100);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toBe("forbidden");
  });

  it("a payment the request never recorded (a crash) is granted once by the processor's event", async () => {
    const bought = await buy(b, { plan: "growth", trial: false });
    // The charge as the request would have made it, but no record of it in the service.
    const intent = {
      id: `pi_crash_${Date.now()}`,
      amount: 750,
      customer: bought.customerId,
      status: "succeeded",
      metadata: { kind: "credits", account_id: String(bought.accountId), credits: "100", payment_id: "x" },
    };
    b.stripe.paymentIntents.push(intent);
    const event = b.stripe.paymentSucceeded(intent.id);
    expect((await deliver(b, event)).status).toBe(200);
    expect((await deliver(b, event)).status).toBe(200);
    expect(await me(bought.auth)).toMatchObject({ permanentCredits: 100 });
  });
});
