import { run, type Runner } from "graphile-worker";
import { pino } from "pino";
import { afterAll, beforeAll, expect } from "vitest";
import type { Config } from "../../src/config.js";
import { workerLogger } from "../../src/jobs/runtime.js";
import { createMailer, type Mailer } from "../../src/mail/mailer.js";
import { mailSendTask } from "../../src/mail/task.js";
import { useTestApp, type TestApp } from "./app.js";
import { startSmtpServer, type TestSmtpServer } from "./smtp.js";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";

/**
 * A local HTTP server that plays the Stripe endpoints the service uses (prices, checkout
 * sessions, subscriptions, payment intents), with the processor's side of the story driven by
 * the test: completing a checkout, renewing, declining, ending a subscription. Each of those
 * returns the event Stripe would send; `signed` signs it with the official client's
 * `webhooks.generateTestHeaderString`.
 */
export interface TestStripe {
  /** `http://127.0.0.1:<port>`: the service's `STRIPE_API_BASE`. */
  apiBase: string;
  secretKey: string;
  webhookSecret: string;
  /** Prices by plan, in cents (a plan without a price is not sold). */
  prices: Map<string, { id: string; amountCents: number; active: boolean }>;
  sessions: Map<string, Session>;
  subscriptions: Map<string, Subscription>;
  /** Every payment intent created (idempotent repeats are not counted twice). */
  paymentIntents: {
    id: string;
    amount: number;
    customer: string;
    status: string;
    metadata: Record<string, string>;
  }[];
  /** Requests received, `METHOD path`. */
  requests: string[];
  /** Customers whose next charges are declined. */
  declining: Set<string>;
  /** Answers every request with 500 while true. */
  down: boolean;
  completeCheckout(sessionId: string): Stripe.Event;
  renew(subscriptionId: string): Stripe.Event;
  failRenewal(subscriptionId: string): Stripe.Event;
  endSubscription(subscriptionId: string): Stripe.Event;
  paymentSucceeded(paymentIntentId: string): Stripe.Event;
  /** The raw body and `Stripe-Signature` header of an event, as Stripe would POST it. */
  signed(event: Stripe.Event, secret?: string): { body: string; signature: string };
  close(): Promise<void>;
}

export interface Session {
  id: string;
  url: string;
  expires_at: number;
  metadata: Record<string, string>;
  client_reference_id: string | null;
  customer_email: string | null;
  price: string;
  trial_days: number;
  status: string;
  customer: string | null;
  subscription: string | null;
}

export interface Subscription {
  id: string;
  customer: string;
  status: string;
  price: string;
  item: string;
  period_start: number;
  period_end: number;
  trial_end: number | null;
  payment_method: string;
  cancel_at_period_end: boolean;
  metadata: Record<string, string>;
}

const DAY = 86_400;
let counter = 0;
const nextId = (prefix: string) => `${prefix}_test${Date.now().toString(36)}${(counter += 1)}`;
const now = () => Math.floor(Date.now() / 1000);

/** Sets `a[b][0][c]=v` style form keys into nested objects (arrays stay objects with numeric keys). */
function parseForm(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [rawKey, value] of new URLSearchParams(text)) {
    const parts = rawKey.replace(/\]/g, "").split("[");
    let node = out;
    parts.forEach((part, i) => {
      if (i === parts.length - 1) node[part] = value;
      else node = (node[part] ??= {}) as Record<string, unknown>;
    });
  }
  return out;
}

const valuesOf = (value: unknown): unknown[] =>
  value && typeof value === "object" ? Object.values(value) : value === undefined ? [] : [value];

export async function startStripeServer(): Promise<TestStripe> {
  const secretKey = "sk_test_local";
  const webhookSecret = "whsec_test_local";
  const stripeClient = new Stripe(secretKey);
  const idempotent = new Map<string, { status: number; body: unknown }>();

  const state: Omit<TestStripe, "apiBase" | "close"> = {
    secretKey,
    webhookSecret,
    prices: new Map([
      ["starter", { id: "price_starter", amountCents: 4_900, active: true }],
      ["growth", { id: "price_growth", amountCents: 14_900, active: true }],
      ["scale", { id: "price_scale", amountCents: 49_900, active: true }],
      ["platinum", { id: "price_platinum", amountCents: 299_900, active: true }],
      ["enterprise", { id: "price_enterprise", amountCents: 499_900, active: true }],
    ]),
    sessions: new Map(),
    subscriptions: new Map(),
    paymentIntents: [],
    requests: [],
    declining: new Set(),
    down: false,
    completeCheckout,
    renew,
    failRenewal,
    endSubscription,
    paymentSucceeded,
    signed,
  };

  const priceById = (id: string) => [...state.prices.entries()].find(([, p]) => p.id === id);

  function subscriptionJson(sub: Subscription) {
    const plan = priceById(sub.price);
    return {
      id: sub.id,
      object: "subscription",
      customer: sub.customer,
      status: sub.status,
      cancel_at_period_end: sub.cancel_at_period_end,
      trial_end: sub.trial_end,
      default_payment_method: sub.payment_method,
      metadata: sub.metadata,
      items: {
        object: "list",
        data: [
          {
            id: sub.item,
            object: "subscription_item",
            current_period_start: sub.period_start,
            current_period_end: sub.period_end,
            price: { id: sub.price, object: "price", lookup_key: plan ? `plan_${plan[0]}` : null },
          },
        ],
      },
    };
  }

  function event(type: string, object: unknown): Stripe.Event {
    return {
      id: nextId("evt"),
      object: "event",
      api_version: "2026-10-28.endive",
      created: now(),
      type,
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      data: { object },
    } as unknown as Stripe.Event;
  }

  function invoiceJson(sub: Subscription, reason: string, amount: number, paid: boolean) {
    return {
      id: nextId("in"),
      object: "invoice",
      customer: sub.customer,
      billing_reason: reason,
      amount_paid: paid ? amount : 0,
      amount_due: amount,
      status: paid ? "paid" : "open",
      parent: { type: "subscription_details", subscription_details: { subscription: sub.id } },
      lines: {
        object: "list",
        data: [{ id: nextId("il"), period: { start: sub.period_start, end: sub.period_end } }],
      },
    };
  }

  function completeCheckout(sessionId: string): Stripe.Event {
    const session = state.sessions.get(sessionId);
    if (!session) throw new Error(`no session ${sessionId}`);
    const start = now();
    const trialing = session.trial_days > 0;
    const sub: Subscription = {
      id: nextId("sub"),
      customer: nextId("cus"),
      status: trialing ? "trialing" : "active",
      price: session.price,
      item: nextId("si"),
      period_start: start,
      period_end: start + (trialing ? session.trial_days : 30) * DAY,
      trial_end: trialing ? start + session.trial_days * DAY : null,
      payment_method: nextId("pm"),
      cancel_at_period_end: false,
      metadata: session.metadata,
    };
    state.subscriptions.set(sub.id, sub);
    Object.assign(session, { status: "complete", customer: sub.customer, subscription: sub.id });
    return event("checkout.session.completed", sessionJson(session));
  }

  function renew(subscriptionId: string): Stripe.Event {
    const sub = state.subscriptions.get(subscriptionId)!;
    sub.period_start = sub.period_end;
    sub.period_end = sub.period_start + 30 * DAY;
    sub.status = "active";
    sub.trial_end = null;
    const amount = priceById(sub.price)?.[1].amountCents ?? 0;
    return event("invoice.paid", invoiceJson(sub, "subscription_cycle", amount, true));
  }

  function failRenewal(subscriptionId: string): Stripe.Event {
    const sub = state.subscriptions.get(subscriptionId)!;
    sub.status = "past_due";
    const amount = priceById(sub.price)?.[1].amountCents ?? 0;
    return event("invoice.payment_failed", invoiceJson(sub, "subscription_cycle", amount, false));
  }

  function endSubscription(subscriptionId: string): Stripe.Event {
    const sub = state.subscriptions.get(subscriptionId)!;
    sub.status = "canceled";
    return event("customer.subscription.deleted", subscriptionJson(sub));
  }

  function paymentSucceeded(paymentIntentId: string): Stripe.Event {
    const intent = state.paymentIntents.find((p) => p.id === paymentIntentId)!;
    return event("payment_intent.succeeded", { object: "payment_intent", ...intent });
  }

  function signed(ev: Stripe.Event, secret = webhookSecret) {
    const body = JSON.stringify(ev);
    return { body, signature: stripeClient.webhooks.generateTestHeaderString({ payload: body, secret }) };
  }

  function sessionJson(session: Session) {
    return {
      id: session.id,
      object: "checkout.session",
      url: session.url,
      expires_at: session.expires_at,
      metadata: session.metadata,
      client_reference_id: session.client_reference_id,
      customer_email: session.customer_email,
      customer_details: session.customer_email ? { email: session.customer_email } : null,
      status: session.status,
      customer: session.customer,
      subscription: session.subscription,
      mode: "subscription",
    };
  }

  const cardError = (customer: string, intentId: string | null) => ({
    status: 402,
    body: {
      error: {
        type: "card_error",
        code: "card_declined",
        decline_code: "generic_decline",
        message: "Your card was declined.",
        ...(intentId && { payment_intent: { id: intentId, status: "requires_payment_method", customer } }),
      },
    },
  });
  const notFound = (what: string) => ({
    status: 404,
    body: { error: { type: "invalid_request_error", code: "resource_missing", message: `No such ${what}` } },
  });

  function route(method: string, path: string, form: Record<string, unknown>, query: URLSearchParams) {
    if (method === "GET" && path === "/v1/prices") {
      const keys = [...query.entries()].filter(([k]) => k.startsWith("lookup_keys")).map(([, v]) => v);
      const data = [...state.prices.entries()]
        .filter(([plan, p]) => keys.includes(`plan_${plan}`) && p.active)
        .map(([plan, p]) => ({
          id: p.id,
          object: "price",
          active: true,
          unit_amount: p.amountCents,
          lookup_key: `plan_${plan}`,
        }));
      return { status: 200, body: { object: "list", data, has_more: false } };
    }
    if (method === "POST" && path === "/v1/checkout/sessions") {
      const lines = valuesOf(form.line_items) as { price: string }[];
      const subData = (form.subscription_data ?? {}) as { trial_period_days?: string };
      const session: Session = {
        id: nextId("cs"),
        url: "",
        expires_at: Number(form.expires_at),
        metadata: (form.metadata ?? {}) as Record<string, string>,
        client_reference_id: (form.client_reference_id as string | undefined) ?? null,
        customer_email: (form.customer_email as string | undefined) ?? null,
        price: lines[0]!.price,
        trial_days: Number(subData.trial_period_days ?? 0),
        status: "open",
        customer: null,
        subscription: null,
      };
      session.url = `https://checkout.stripe.test/c/pay/${session.id}`;
      state.sessions.set(session.id, session);
      return { status: 200, body: sessionJson(session) };
    }
    let m = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(path);
    if (method === "GET" && m) {
      const session = state.sessions.get(m[1]!);
      return session ? { status: 200, body: sessionJson(session) } : notFound("checkout session");
    }
    m = /^\/v1\/subscriptions\/([^/]+)$/.exec(path);
    if (m) {
      const sub = state.subscriptions.get(m[1]!);
      if (!sub) return notFound("subscription");
      if (method === "GET") return { status: 200, body: subscriptionJson(sub) };
      if (form.cancel_at_period_end === "true") sub.cancel_at_period_end = true;
      const item = valuesOf(form.items)[0] as { price?: string } | undefined;
      let amountPaid = 0;
      if (item?.price) {
        const oldAmount = priceById(sub.price)?.[1].amountCents ?? 0;
        const newAmount = priceById(item.price)?.[1].amountCents ?? 0;
        if (form.trial_end === "now") amountPaid = newAmount;
        else if (form.proration_behavior === "always_invoice") {
          const left = Math.max(0, sub.period_end - now()) / (sub.period_end - sub.period_start);
          amountPaid = Math.max(0, Math.round((newAmount - oldAmount) * left));
        }
        if (amountPaid > 0 && state.declining.has(sub.customer)) return cardError(sub.customer, null);
        sub.price = item.price;
        if (form.trial_end === "now") {
          sub.status = "active";
          sub.trial_end = null;
          sub.period_start = now();
          sub.period_end = sub.period_start + 30 * DAY;
        }
      }
      const invoice = invoiceJson(sub, "subscription_update", amountPaid, true);
      return { status: 200, body: { ...subscriptionJson(sub), latest_invoice: invoice } };
    }
    if (method === "POST" && path === "/v1/payment_intents") {
      const customer = String(form.customer);
      const intent = {
        id: nextId("pi"),
        amount: Number(form.amount),
        customer,
        status: state.declining.has(customer) ? "requires_payment_method" : "succeeded",
        metadata: (form.metadata ?? {}) as Record<string, string>,
      };
      state.paymentIntents.push(intent);
      if (intent.status !== "succeeded") return cardError(customer, intent.id);
      return { status: 200, body: { object: "payment_intent", ...intent } };
    }
    return notFound(`route ${method} ${path}`);
  }

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://localhost");
      state.requests.push(`${req.method} ${url.pathname}`);
      const key = req.headers["idempotency-key"];
      let answer: { status: number; body: unknown };
      if (state.down) answer = { status: 500, body: { error: { type: "api_error", message: "down" } } };
      else if (typeof key === "string" && idempotent.has(key)) answer = idempotent.get(key)!;
      else {
        answer = route(
          req.method ?? "GET",
          url.pathname,
          parseForm(Buffer.concat(chunks).toString()),
          url.searchParams,
        );
        if (typeof key === "string") idempotent.set(key, answer);
      }
      res.writeHead(answer.status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    apiBase: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

// ---------------------------------------------------------------------------------------------
// The billing test app: the service configured against the local Stripe server, a local SMTP
// server receiving its mail (sent by a graphile-worker runner), and helpers that drive a whole
// purchase.
// ---------------------------------------------------------------------------------------------

export interface BillingTestApp {
  t: TestApp;
  stripe: TestStripe;
  smtp: TestSmtpServer;
}

/** The test app with payments configured (`stripe: false`: without STRIPE_SECRET_KEY). */
export function useBillingApp(options: { stripe?: boolean } = {}): BillingTestApp {
  const overrides: Partial<Config> = { trustProxy: true };
  const holder = {} as BillingTestApp;
  let runner: Runner | undefined;
  let mailer: Mailer | undefined;
  beforeAll(async () => {
    holder.stripe = await startStripeServer();
    holder.smtp = await startSmtpServer();
    if (options.stripe !== false) {
      Object.assign(overrides, {
        stripeSecretKey: holder.stripe.secretKey,
        stripeWebhookSecret: holder.stripe.webhookSecret,
        stripeApiBase: holder.stripe.apiBase,
      });
    }
  });
  holder.t = useTestApp(overrides);
  beforeAll(async () => {
    const silent = pino({ level: "silent" });
    mailer = createMailer({
      smtpUrl: holder.smtp.url,
      dataDir: holder.t.ctx.config.dataDir,
      from: "Lead Service <no-reply@localhost>",
      logger: silent,
    });
    runner = await run({
      pgPool: holder.t.ctx.pool,
      concurrency: 2,
      noHandleSignals: true,
      pollInterval: 100,
      taskList: { mail__send: mailSendTask(mailer) },
      logger: workerLogger(silent),
    });
  });
  afterAll(async () => {
    await runner?.stop();
    mailer?.close();
    await holder.smtp?.close();
    await holder.stripe?.close();
  });
  return holder;
}

let ipCounter = 0;
/** A fresh client address, so the per-IP purchase limit (5 per hour) never mixes tests. */
export const freshIp = () => `203.0.113.${(ipCounter = (ipCounter % 250) + 1)}`;

/** Posts a signed event to the payment webhook, as Stripe would. */
export async function deliver(b: BillingTestApp, event: Stripe.Event, secret?: string) {
  const { body, signature } = b.stripe.signed(event, secret);
  return b.t
    .request()
    .post("/api/v1/payments/webhook")
    .set("Content-Type", "application/json; charset=utf-8")
    .set("Stripe-Signature", signature)
    .send(body);
}

/** The checkout session a purchase answer points at. */
export function sessionOf(b: BillingTestApp, checkoutUrl: string): Session {
  const id = checkoutUrl.slice(checkoutUrl.lastIndexOf("/") + 1);
  const session = b.stripe.sessions.get(id);
  if (!session) throw new Error(`no session for ${checkoutUrl}`);
  return session;
}

/** A bought subscription: the account, its key as mailed, and the processor's subscription. */
export interface Bought {
  email: string;
  accountId: number;
  apiKey: string;
  auth: { Authorization: string };
  subscriptionId: string;
  customerId: string;
}

let emailCounter = 0;
export const freshEmail = (tag = "buyer") =>
  `${tag}${Date.now().toString(36)}${(emailCounter += 1)}@example.com`;

/**
 * Drives a whole purchase: POST /purchase, the checkout completed at the local Stripe server, its
 * signed event delivered, and the API key read from the mail the local SMTP server received.
 */
export async function buy(
  b: BillingTestApp,
  options: { plan?: string; trial?: boolean; email?: string } = {},
): Promise<Bought> {
  const email = options.email ?? freshEmail();
  const res = await b.t
    .request()
    .post("/api/v1/purchase")
    .set("X-Forwarded-For", freshIp())
    .send({
      email,
      plan: options.plan ?? "growth",
      ...(options.trial !== undefined && { trial: options.trial }),
    });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const session = sessionOf(b, res.body.data.checkoutUrl as string);
  const event = b.stripe.completeCheckout(session.id);
  const ack = await deliver(b, event);
  expect(ack.status, JSON.stringify(ack.body)).toBe(200);
  const mail = await b.smtp.waitFor((m) => m.to.includes(email) && m.subject === "Your API key", 10_000);
  const apiKey = /svck_[A-Za-z0-9_-]+/.exec(mail.text)?.[0];
  if (!apiKey) throw new Error("no key in the mail");
  const account = await b.t.ctx.db
    .selectFrom("accounts")
    .select("id")
    .where("email", "=", email)
    .executeTakeFirstOrThrow();
  const sub = b.stripe.subscriptions.get(session.subscription!)!;
  return {
    email,
    accountId: account.id,
    apiKey,
    auth: { Authorization: `Bearer ${apiKey}` },
    subscriptionId: sub.id,
    customerId: sub.customer,
  };
}
