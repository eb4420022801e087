import { describe, expect, it } from "vitest";
import { buildAccount } from "./helpers/factories.js";
import { buy, deliver, freshEmail, freshIp, sessionOf, useBillingApp } from "./helpers/stripe-server.js";

// Buying a subscription through the API against a local Stripe server: purchase, checkout,
// the signed webhook, the key by e-mail over SMTP, and the key working on GET /me.

const b = useBillingApp();

const purchase = (body: Record<string, unknown>, ip = freshIp()) =>
  b.t.request().post("/api/v1/purchase").set("X-Forwarded-For", ip).send(body);

async function countRows(table: "api_keys" | "credit_ledger" | "billing_events", accountId?: number) {
  let q = b.t.ctx.db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as("n"));
  if (accountId !== undefined && table !== "billing_events") q = q.where("account_id", "=", accountId);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

describe("POST /purchase", () => {
  it("opens a 24-hour checkout with a 14-day trial; checkout completed mails a key that works on GET /me", async () => {
    const email = freshEmail();
    const res = await purchase({ email, plan: "growth" });
    expect(res.status).toBe(201);
    const data = res.body.data;
    expect(JSON.stringify(res.body)).not.toMatch(/svck_/);
    expect(data.plan).toBe("growth");
    expect(data.checkoutUrl).toMatch(/^https:\/\/checkout\.stripe\.test\//);
    const hours = (Date.parse(data.expiresAt) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(23.9);
    expect(hours).toBeLessThanOrEqual(24);
    expect(data.trial).toMatchObject({ eligible: true, days: 14, credits: 1000 });
    expect(data.trial.reason).toBeUndefined();
    const session = sessionOf(b, data.checkoutUrl);
    expect(session.trial_days).toBe(14);
    expect(session.customer_email).toBe(email);
    expect(session.price).toBe("price_growth");

    const ack = await deliver(b, b.stripe.completeCheckout(session.id));
    expect(ack.status).toBe(200);
    expect(ack.body).toEqual({ received: true });
    const mail = await b.smtp.waitFor((m) => m.to.includes(email) && m.subject === "Your API key", 10_000);
    const key = /svck_[A-Za-z0-9_-]+/.exec(mail.text)![0];
    const me = await b.t.request().get("/api/v1/me").set("Authorization", `Bearer ${key}`);
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({
      email,
      subscriptionPlan: "growth",
      subscriptionStatus: "trialing",
      isSubscribed: true,
      monthlyCredits: 1000,
      monthlyCreditsRemaining: 1000,
      permanentCredits: 0,
      totalCreditsRemaining: 1000,
    });
  });

  it("without a trial the plan is active with its full monthly credits", async () => {
    const bought = await buy(b, { plan: "scale", trial: false });
    const me = await b.t.request().get("/api/v1/me").set(bought.auth);
    expect(me.body.data).toMatchObject({
      subscriptionPlan: "scale",
      subscriptionStatus: "active",
      monthlyCredits: 10_000,
    });
    const session = [...b.stripe.sessions.values()].find((s) => s.subscription === bought.subscriptionId)!;
    expect(session.trial_days).toBe(0);
  });

  it("trial rules: only `false` skips it, never platinum or enterprise, one per person", async () => {
    const notRequested = await purchase({ email: freshEmail(), plan: "starter", trial: false });
    expect(notRequested.body.data.trial).toMatchObject({
      eligible: false,
      days: 0,
      credits: 0,
      endsAt: null,
      reason: "not_requested",
    });
    for (const plan of ["platinum", "enterprise"]) {
      const res = await purchase({ email: freshEmail(), plan });
      expect(res.status).toBe(201);
      expect(res.body.data.trial).toMatchObject({ eligible: false, reason: "plan_not_eligible" });
      expect(sessionOf(b, res.body.data.checkoutUrl).trial_days).toBe(0);
    }
    const first = await buy(b, { plan: "starter" });
    // The same person under another letter case and a +tag: a new address, no second trial.
    const [local, domain] = first.email.split("@");
    const again = await purchase({ email: `${local!.toUpperCase()}+second@${domain}`, plan: "growth" });
    expect(again.status).toBe(201);
    expect(again.body.data.trial).toMatchObject({ eligible: false, reason: "trial_already_used" });
    expect(sessionOf(b, again.body.data.checkoutUrl).trial_days).toBe(0);
  });

  it("409 already_subscribed for an address with a subscription, also on a trial", async () => {
    const trialing = await buy(b, { plan: "growth" });
    const res = await purchase({ email: trialing.email.toUpperCase(), plan: "scale" });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe("already_subscribed");
    const { accountId } = await buildAccount(b.t.ctx.db, { email: freshEmail("admin") });
    const email = (
      await b.t.ctx.db
        .selectFrom("accounts")
        .select("email")
        .where("id", "=", accountId)
        .executeTakeFirstOrThrow()
    ).email;
    expect((await purchase({ email, plan: "growth" })).body.error).toBe("already_subscribed");
  });

  it("an address that already has an account gets the checkout link by e-mail, not in the answer", async () => {
    const email = freshEmail("returning");
    await buildAccount(b.t.ctx.db, { email, status: "canceled" });
    const sessionsBefore = b.stripe.sessions.size;
    const res = await purchase({ email, plan: "growth" });
    expect(res.status).toBe(201);
    expect(res.body.data.checkoutUrl).toBeNull();
    expect(b.stripe.sessions.size).toBe(sessionsBefore + 1);
    const mail = await b.smtp.waitFor(
      (m) => m.to.includes(email) && m.subject === "Confirm your purchase",
      10_000,
    );
    const url = /https:\/\/checkout\.stripe\.test\/\S+/.exec(mail.text)![0];
    const session = sessionOf(b, url);
    const ack = await deliver(b, b.stripe.completeCheckout(session.id));
    expect(ack.status).toBe(200);
    const keyMail = await b.smtp.waitFor((m) => m.to.includes(email) && m.subject === "Your API key", 10_000);
    const key = /svck_[A-Za-z0-9_-]+/.exec(keyMail.text)![0];
    const me = await b.t.request().get("/api/v1/me").set("Authorization", `Bearer ${key}`);
    expect(me.body.data).toMatchObject({ email, subscriptionPlan: "growth", subscriptionStatus: "trialing" });
  });

  it("400 invalid_email, invalid_plan, validation_error; 410 plan_retired; nothing opened", async () => {
    const before = b.stripe.sessions.size;
    for (const email of [
      "not-an-email",
      "a@b",
      "two@@example.com",
      "sp ace@example.com",
      `${"x".repeat(250)}@example.com`,
    ]) {
      const res = await purchase({ email, plan: "growth" });
      expect(res.status, email).toBe(400);
      expect(res.body.error).toBe("invalid_email");
    }
    const badPlan = await purchase({ email: freshEmail(), plan: "gold" });
    expect(badPlan.status).toBe(400);
    expect(badPlan.body.error).toBe("invalid_plan");
    for (const body of [
      { plan: "growth" },
      { email: freshEmail() },
      { email: freshEmail(), plan: "growth", trial: "no" },
      { email: 5, plan: "growth" },
    ]) {
      const res = await purchase(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toBe("validation_error");
    }
    b.stripe.prices.get("scale")!.active = false;
    try {
      const retired = await purchase({ email: freshEmail(), plan: "scale" });
      expect(retired.status).toBe(410);
      expect(retired.body.error).toBe("plan_retired");
    } finally {
      b.stripe.prices.get("scale")!.active = true;
    }
    expect(b.stripe.sessions.size).toBe(before);
  });

  it("403 disposable_email for an address at a disposable-mail domain (or a subdomain of one)", async () => {
    const before = b.stripe.sessions.size;
    for (const email of ["someone@mailinator.com", "someone@eu.mailinator.com", "SOMEONE@Mailinator.COM"]) {
      const res = await purchase({ email, plan: "growth" });
      expect(res.status, email).toBe(403);
      expect(res.body).toMatchObject({ error: "disposable_email", message: expect.any(String) });
    }
    expect(b.stripe.sessions.size).toBe(before);
  });

  it("503 payment_unavailable when the processor cannot be reached", async () => {
    b.stripe.down = true;
    try {
      const res = await purchase({ email: freshEmail(), plan: "growth" });
      expect(res.status).toBe(503);
      expect(res.body.error).toBe("payment_unavailable");
    } finally {
      b.stripe.down = false;
    }
  });

  it("limits purchases to 5 per hour per IP", async () => {
    const ip = freshIp();
    for (let i = 0; i < 5; i += 1)
      expect((await purchase({ email: freshEmail(), plan: "starter" }, ip)).status).toBe(201);
    const res = await purchase({ email: freshEmail(), plan: "starter" }, ip);
    expect(res.status).toBe(429);
    expect(res.body.error).toBe("Rate limit exceeded");
  });
});

describe("POST /claim-key", () => {
  it("answers 404 not_found: current purchases issue no claim token", async () => {
    const res = await b.t
      .request()
      .post("/api/v1/claim-key")
      .set("X-Forwarded-For", freshIp())
      .send({ email: "a@example.com", claimToken: "tok_123" });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe("not_found");
    const bad = await b.t
      .request()
      .post("/api/v1/claim-key")
      .set("X-Forwarded-For", freshIp())
      .send({ email: "a@example.com" });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("validation_error");
  });
});

describe("POST /payments/webhook", () => {
  it("refuses a bad or missing signature with 400 bad_request and applies nothing", async () => {
    const res = await purchase({ email: freshEmail(), plan: "growth" });
    const event = b.stripe.completeCheckout(sessionOf(b, res.body.data.checkoutUrl).id);
    const events = await countRows("billing_events");
    const forged = await deliver(b, event, "whsec_wrong");
    expect(forged.status).toBe(400);
    expect(forged.body.error).toBe("bad_request");
    const { body } = b.stripe.signed(event);
    const unsigned = await b.t
      .request()
      .post("/api/v1/payments/webhook")
      .set("Content-Type", "application/json")
      .send(body);
    expect(unsigned.status).toBe(400);
    const tampered = b.stripe.signed(event);
    const altered = await b.t
      .request()
      .post("/api/v1/payments/webhook")
      .set("Content-Type", "application/json")
      .set("Stripe-Signature", tampered.signature)
      .send(tampered.body.replace("checkout.session.completed", "checkout.session.completeD"));
    expect(altered.status).toBe(400);
    expect(await countRows("billing_events")).toBe(events);
  });

  it("applies each event once: a repeat, even concurrent, changes nothing", async () => {
    const email = freshEmail();
    const res = await purchase({ email, plan: "starter", trial: false });
    const event = b.stripe.completeCheckout(sessionOf(b, res.body.data.checkoutUrl).id);
    const answers = await Promise.all([deliver(b, event), deliver(b, event), deliver(b, event)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const account = await b.t.ctx.db
      .selectFrom("accounts")
      .select("id")
      .where("email", "=", email)
      .executeTakeFirstOrThrow();
    const keys = await countRows("api_keys", account.id);
    const ledger = await countRows("credit_ledger", account.id);
    expect(keys).toBe(1);
    expect(await deliver(b, event).then((r) => r.status)).toBe(200);
    expect(await countRows("api_keys", account.id)).toBe(keys);
    expect(await countRows("credit_ledger", account.id)).toBe(ledger);
    await b.smtp.waitFor((m) => m.to.includes(email), 10_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(b.smtp.messages.filter((m) => m.to.includes(email))).toHaveLength(1);
  });

  it("events that arrive before their checkout wait for it, then apply once", async () => {
    const email = freshEmail();
    const res = await purchase({ email, plan: "growth", trial: false });
    const session = sessionOf(b, res.body.data.checkoutUrl);
    const checkout = b.stripe.completeCheckout(session.id);
    const renewal = b.stripe.renew(session.subscription!);
    // The renewal first (twice), then the checkout (twice).
    expect((await deliver(b, renewal)).status).toBe(200);
    expect((await deliver(b, renewal)).status).toBe(200);
    expect((await deliver(b, checkout)).status).toBe(200);
    expect((await deliver(b, checkout)).status).toBe(200);
    const mail = await b.smtp.waitFor((m) => m.to.includes(email) && m.subject === "Your API key", 10_000);
    const key = /svck_[A-Za-z0-9_-]+/.exec(mail.text)![0];
    const me = await b.t.request().get("/api/v1/me").set("Authorization", `Bearer ${key}`);
    // 2,000 from the checkout plus 2,000 from the renewal, unused ones rolled over.
    expect(me.body.data).toMatchObject({ subscriptionStatus: "active", totalCreditsRemaining: 4000 });
  });

  it("a subscription ended before its checkout arrived ends right after the checkout", async () => {
    const email = freshEmail();
    const res = await purchase({ email, plan: "starter", trial: false });
    const session = sessionOf(b, res.body.data.checkoutUrl);
    const checkout = b.stripe.completeCheckout(session.id);
    const ended = b.stripe.endSubscription(session.subscription!);
    expect((await deliver(b, ended)).status).toBe(200);
    expect((await deliver(b, checkout)).status).toBe(200);
    expect((await deliver(b, ended)).status).toBe(200);
    const account = await b.t.ctx.db
      .selectFrom("accounts")
      .select(["id", "subscription_status"])
      .where("email", "=", email)
      .executeTakeFirstOrThrow();
    expect(account.subscription_status).toBe("canceled");
    const left = await b.t.ctx.db
      .selectFrom("credit_ledger")
      .select((eb) => eb.fn.sum<string>("amount_tenths").as("left"))
      .where("account_id", "=", account.id)
      .executeTakeFirstOrThrow();
    expect(Number(left.left)).toBe(0);
  });

  it("ignores events it does not handle, and checkouts it did not open", async () => {
    const other = {
      id: `evt_other_${Date.now()}`,
      object: "event",
      type: "customer.created",
      created: Math.floor(Date.now() / 1000),
      data: { object: { id: "cus_x" } },
    };
    const res = await deliver(b, other as never);
    expect(res.status).toBe(200);
    const foreign = {
      ...other,
      id: `evt_foreign_${Date.now()}`,
      type: "checkout.session.completed",
      data: { object: { id: "cs_unknown", subscription: "sub_unknown", metadata: {} } },
    };
    expect((await deliver(b, foreign as never)).status).toBe(200);
  });
});
