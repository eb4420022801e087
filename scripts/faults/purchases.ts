import { sql } from "kysely";
import { startSmtpServer, type TestSmtpServer } from "../../test/helpers/smtp.js";
import { startStripeServer, type TestStripe } from "../../test/helpers/stripe-server.js";
import { api, moneyOf, sleep, type FaultService } from "./harness.js";

// Credit purchases (POST /purchase-credits) while the API process is killed (scenario 7): the
// local Stripe server and SMTP server of the tests, buyers who retry a cut request with the same
// Idempotency-Key, as the reference asks clients to. Afterwards every payment the processor took
// is granted exactly once, nothing is granted that was not paid, and balances equal ledgers.

export interface Payments {
  stripe: TestStripe;
  smtp: TestSmtpServer;
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startPayments(): Promise<Payments> {
  const stripe = await startStripeServer();
  const smtp = await startSmtpServer();
  return {
    stripe,
    smtp,
    env: {
      STRIPE_SECRET_KEY: stripe.secretKey,
      STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
      STRIPE_API_BASE: stripe.apiBase,
      SMTP_URL: smtp.url,
      TRUST_PROXY: "true",
    },
    async close() {
      await smtp.close();
      await stripe.close();
    },
  };
}

/** Posts a processor event to the payment webhook, signed as Stripe signs it. */
async function deliverEvent(base: string, payments: Payments, event: unknown): Promise<number> {
  const { body, signature } = payments.stripe.signed(event as Parameters<TestStripe["signed"]>[0]);
  const res = await fetch(`${base}/api/v1/payments/webhook`, {
    method: "POST",
    headers: { "content-type": "application/json; charset=utf-8", "stripe-signature": signature },
    body,
  });
  return res.status;
}

/**
 * A subscription bought through the API, its checkout completed at the local processor and its
 * event acknowledged; the service then mails the API key (its session id and the address).
 */
export async function checkout(
  service: FaultService,
  payments: Payments,
  n: number,
): Promise<{ email: string; sessionId: string }> {
  const email = `faults-buyer-${n}-${Date.now().toString(36)}@example.com`;
  const res = await fetch(`${service.base}/api/v1/purchase`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": `203.0.113.${n + 1}` },
    body: JSON.stringify({ email, plan: "growth", trial: false }),
  });
  const body = (await res.json()) as { data?: { checkoutUrl: string } };
  if (res.status !== 201 || !body.data)
    throw new Error(`purchase answered ${res.status}: ${JSON.stringify(body)}`);
  const sessionId = body.data.checkoutUrl.slice(body.data.checkoutUrl.lastIndexOf("/") + 1);
  const ack = await deliverEvent(service.base, payments, payments.stripe.completeCheckout(sessionId));
  if (ack !== 200) throw new Error(`the checkout event answered ${ack}`);
  return { email, sessionId };
}

/** A subscription bought through the API (checkout completed at the local processor), and its key. */
export async function buySubscription(
  service: FaultService,
  payments: Payments,
  n: number,
): Promise<{ accountId: number; apiKey: string; customerId: string }> {
  const { email, sessionId } = await checkout(service, payments, n);
  const mail = await payments.smtp.waitFor(
    (m) => m.to.includes(email) && m.subject === "Your API key",
    30_000,
  );
  const apiKey = /svck_[A-Za-z0-9_-]+/.exec(mail.text)?.[0];
  if (!apiKey) throw new Error("no key in the mail");
  const account = await service.db
    .selectFrom("accounts")
    .select("id")
    .where("email", "=", email)
    .executeTakeFirstOrThrow();
  const session = payments.stripe.sessions.get(sessionId)!;
  const customerId = payments.stripe.subscriptions.get(session.subscription!)!.customer;
  return { accountId: account.id, apiKey, customerId };
}

/**
 * One buyer: buys `creditCount` credits again and again until `running()` is false; a request cut
 * by a kill is sent again with the same Idempotency-Key until it gets an answer.
 */
export async function buyerLoop(
  service: FaultService,
  buyer: { apiKey: string },
  running: () => boolean,
  tag: string,
): Promise<{ answered: Map<number, number>; retriedAfterCut: number }> {
  const answered = new Map<number, number>();
  let retriedAfterCut = 0;
  for (let n = 0; running(); n += 1) {
    const key = `faults-${tag}-${n}-${Date.now().toString(36)}`;
    for (let attempt = 0; attempt < 200; attempt += 1) {
      try {
        const res = await api(
          service.base,
          buyer.apiKey,
          "POST",
          "/purchase-credits",
          { creditCount: 100 },
          15_000,
          {
            "idempotency-key": key,
          },
        );
        // 429 charge_in_progress / 503: the same key again shortly, as a client would.
        if (res.status === 429 || res.status === 503) {
          await sleep(200);
          continue;
        }
        answered.set(res.status, (answered.get(res.status) ?? 0) + 1);
        break;
      } catch {
        if (attempt === 0) retriedAfterCut += 1;
        await sleep(200);
      }
    }
    await sleep(100);
  }
  return { answered, retriedAfterCut };
}

/**
 * After the kills: every payment the processor took is granted exactly once (the processor's
 * success events are delivered too, as Stripe delivers them), none is granted without a payment,
 * and the balance the API reports is the ledger's.
 */
export async function checkPurchases(
  service: FaultService,
  payments: Payments,
  buyers: { accountId: number; apiKey: string; customerId: string }[],
): Promise<{ paid: number; granted: number; failures: string[] }> {
  const failures: string[] = [];
  for (const intent of payments.stripe.paymentIntents) {
    if (intent.status === "succeeded") {
      await deliverEvent(service.base, payments, payments.stripe.paymentSucceeded(intent.id));
    }
  }
  let paid = 0;
  let granted = 0;
  for (const buyer of buyers) {
    const intents = payments.stripe.paymentIntents.filter(
      (p) => p.customer === buyer.customerId && p.status === "succeeded",
    );
    const grants = await sql<{ reference: string | null; n: number }>`
      select reference, count(*)::int as n from credit_ledger
      where account_id = ${buyer.accountId} and reason = 'credit_purchase' group by reference`.execute(
      service.db,
    );
    paid += intents.length;
    granted += grants.rows.reduce((sum, r) => sum + Number(r.n), 0);
    const byReference = new Map(grants.rows.map((r) => [r.reference, Number(r.n)]));
    for (const intent of intents) {
      const n = byReference.get(intent.id) ?? 0;
      if (n !== 1) failures.push(`payment ${intent.id} granted ${n} times`);
    }
    for (const [reference] of byReference) {
      if (!intents.some((i) => i.id === reference)) failures.push(`grant ${reference} without a payment`);
    }
    const me = await api(service.base, buyer.apiKey, "GET", "/me");
    const data = me.body.data as { totalCreditsRemaining?: number } | undefined;
    const ledger = await moneyOf(service.db, buyer.accountId);
    if (data?.totalCreditsRemaining !== ledger.balanceTenths / 10) {
      failures.push(
        `account ${buyer.accountId}: /me ${data?.totalCreditsRemaining} vs ledger ${ledger.balanceTenths / 10}`,
      );
    }
  }
  return { paid, granted, failures };
}
