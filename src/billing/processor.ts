import Stripe from "stripe";
import { PLAN_IDS, isPlanId, type PlanId } from "../accounts/plans.js";

/**
 * The payment processor as billing sees it: the few calls the service makes, over the official
 * `stripe` client (one adapter, so the rest of billing never sees a Stripe type). Tests point it
 * at a local server that plays these endpoints (`STRIPE_API_BASE`).
 */
export interface PaymentProcessor {
  /** The active price of each plan on sale (Stripe prices with lookup key `plan_<id>`). */
  planPrices(): Promise<Map<PlanId, PlanPrice>>;
  /** Opens a hosted checkout session for a subscription. */
  createCheckout(input: CheckoutInput): Promise<CheckoutSession>;
  /** A checkout session as the processor has it now. */
  getCheckout(sessionId: string): Promise<CompletedCheckout>;
  getSubscription(subscriptionId: string): Promise<ProcessorSubscription>;
  /** Charges the saved payment method off-session; PaymentDeclined / PaymentFailed when it fails. */
  charge(input: ChargeInput): Promise<{ paymentIntentId: string }>;
  /** Sets the subscription to end with its current period (repeatable). */
  cancelAtPeriodEnd(subscriptionId: string): Promise<ProcessorSubscription>;
  /** Moves the subscription to another price (see PriceChange). */
  changePrice(subscriptionId: string, change: PriceChange): Promise<PriceChanged>;
  /** Verifies a webhook's signature over the raw body and reads the event; throws BadSignature. */
  verifyEvent(rawBody: Buffer, signature: string): ProcessorEvent;
}

export interface PlanPrice {
  priceId: string;
  /** Monthly price, in US cents. */
  amountCents: number;
}

export interface CheckoutInput {
  checkoutId: string;
  email: string;
  priceId: string;
  trialDays: number;
  expiresAt: Date;
  successUrl: string;
  cancelUrl: string;
}

export interface CheckoutSession {
  sessionId: string;
  url: string;
  expiresAt: Date;
}

export interface CompletedCheckout {
  sessionId: string;
  checkoutId: string | null;
  customerId: string | null;
  subscriptionId: string | null;
  email: string | null;
}

export interface ProcessorSubscription {
  id: string;
  customerId: string;
  status: string;
  plan: PlanId | null;
  /** The subscription item whose price is the plan (a price change replaces its price). */
  itemId: string | null;
  periodStart: Date | null;
  periodEnd: Date | null;
  trialEnd: Date | null;
  paymentMethodId: string | null;
  cancelAtPeriodEnd: boolean;
}

export interface ChargeInput {
  customerId: string;
  paymentMethodId: string;
  amountCents: number;
  description: string;
  metadata: Record<string, string>;
  idempotencyKey: string;
}

/**
 * A price change: `prorate` charges the prorated difference now (an upgrade); `next_renewal`
 * changes the price from the next invoice on, charging nothing now (a downgrade, a trial switch);
 * `end_trial` ends the trial now and charges the full price.
 */
export interface PriceChange {
  itemId: string;
  priceId: string;
  how: "prorate" | "next_renewal" | "end_trial";
  idempotencyKey: string;
}

export interface PriceChanged {
  subscription: ProcessorSubscription;
  /** What the change's invoice charged, in cents (0 when none). */
  amountPaidCents: number;
}

/** An event of the processor, verified. */
export interface ProcessorEvent {
  id: string;
  type: string;
  created: Date;
  object: Record<string, unknown>;
}

/** The card was declined (402 `payment_declined`). */
export class PaymentDeclined extends Error {
  constructor(readonly paymentIntentId: string | null) {
    super("The card was declined.");
  }
}

/** The charge could not be completed for another reason (402 `payment_failed`). */
export class PaymentFailed extends Error {}

/** The processor could not be reached or failed (503 `payment_unavailable`). */
export class ProcessorUnavailable extends Error {}

/** The webhook's signature did not verify, or its body is not an event (400 `bad_request`). */
export class BadSignature extends Error {}

/** The lookup key of a plan's price at the processor. */
export const priceLookupKey = (plan: PlanId): string => `plan_${plan}`;

function planOfLookupKey(key: string | null | undefined): PlanId | null {
  const plan = key?.startsWith("plan_") ? key.slice(5) : undefined;
  return isPlanId(plan) ? plan : null;
}

const toDate = (seconds: number | null | undefined): Date | null =>
  typeof seconds === "number" ? new Date(seconds * 1000) : null;

const idOf = (value: string | { id: string } | null | undefined): string | null =>
  value == null ? null : typeof value === "string" ? value : value.id;

function toSubscription(sub: Stripe.Subscription): ProcessorSubscription {
  const item = sub.items.data[0];
  return {
    id: sub.id,
    customerId: idOf(sub.customer) ?? "",
    status: sub.status,
    plan: planOfLookupKey(item?.price.lookup_key),
    itemId: item?.id ?? null,
    periodStart: toDate(item?.current_period_start),
    periodEnd: toDate(item?.current_period_end),
    trialEnd: toDate(sub.trial_end),
    paymentMethodId: idOf(sub.default_payment_method),
    cancelAtPeriodEnd: sub.cancel_at_period_end,
  };
}

/** Maps the client's errors to the adapter's: declines, other failures, unreachable. */
function mapped(err: unknown): unknown {
  if (err instanceof Stripe.errors.StripeCardError) {
    const raw = err.raw as { payment_intent?: { id?: string } } | undefined;
    return new PaymentDeclined(raw?.payment_intent?.id ?? null);
  }
  if (
    err instanceof Stripe.errors.StripeConnectionError ||
    err instanceof Stripe.errors.StripeAPIError ||
    err instanceof Stripe.errors.StripeAuthenticationError ||
    err instanceof Stripe.errors.StripeRateLimitError
  ) {
    return new ProcessorUnavailable(err.message);
  }
  if (err instanceof Stripe.errors.StripeError) return new PaymentFailed(err.message);
  return err;
}

async function call<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw mapped(err);
  }
}

/** Options of the adapter (configuration read by the entry point). */
export interface StripeOptions {
  secretKey: string;
  webhookSecret: string | undefined;
  /** `http://127.0.0.1:port` in tests; unset: Stripe's own API. */
  apiBase: string | undefined;
}

/** The `host`, `port` and `protocol` options of the client for an API base URL. */
function endpointOf(apiBase: string | undefined): Partial<Stripe.StripeConfig> {
  if (!apiBase) return {};
  const url = new URL(apiBase);
  const protocol = url.protocol === "http:" ? "http" : "https";
  return { host: url.hostname, port: url.port || (protocol === "http" ? 80 : 443), protocol };
}

/** The processor over the official Stripe client. */
export function createStripeProcessor(options: StripeOptions): PaymentProcessor {
  const stripe = new Stripe(options.secretKey, {
    ...endpointOf(options.apiBase),
    maxNetworkRetries: 1,
    timeout: 20_000,
  });

  return {
    planPrices: () =>
      call(async () => {
        const list = await stripe.prices.list({
          lookup_keys: PLAN_IDS.map(priceLookupKey),
          active: true,
          limit: PLAN_IDS.length,
        });
        const prices = new Map<PlanId, PlanPrice>();
        for (const price of list.data) {
          const plan = planOfLookupKey(price.lookup_key);
          if (plan && price.active && price.unit_amount !== null) {
            prices.set(plan, { priceId: price.id, amountCents: price.unit_amount });
          }
        }
        return prices;
      }),

    createCheckout: (input) =>
      call(async () => {
        const session = await stripe.checkout.sessions.create(
          {
            mode: "subscription",
            customer_email: input.email,
            client_reference_id: input.checkoutId,
            metadata: { checkout_id: input.checkoutId },
            line_items: [{ price: input.priceId, quantity: 1 }],
            payment_method_collection: "always",
            subscription_data: {
              metadata: { checkout_id: input.checkoutId },
              ...(input.trialDays > 0 && { trial_period_days: input.trialDays }),
            },
            expires_at: Math.floor(input.expiresAt.getTime() / 1000),
            success_url: input.successUrl,
            cancel_url: input.cancelUrl,
          },
          { idempotencyKey: `checkout-${input.checkoutId}` },
        );
        if (!session.url) throw new PaymentFailed("the checkout session has no URL");
        return {
          sessionId: session.id,
          url: session.url,
          expiresAt: toDate(session.expires_at) ?? input.expiresAt,
        };
      }),

    getCheckout: (sessionId) =>
      call(async () => {
        const session = await stripe.checkout.sessions.retrieve(sessionId);
        return {
          sessionId: session.id,
          checkoutId: session.metadata?.checkout_id ?? session.client_reference_id ?? null,
          customerId: idOf(session.customer),
          subscriptionId: idOf(session.subscription),
          email: session.customer_details?.email ?? session.customer_email ?? null,
        };
      }),

    getSubscription: (id) => call(async () => toSubscription(await stripe.subscriptions.retrieve(id))),

    charge: (input) =>
      call(async () => {
        const intent = await stripe.paymentIntents.create(
          {
            amount: input.amountCents,
            currency: "usd",
            customer: input.customerId,
            payment_method: input.paymentMethodId,
            off_session: true,
            confirm: true,
            description: input.description,
            metadata: input.metadata,
          },
          { idempotencyKey: input.idempotencyKey },
        );
        if (intent.status !== "succeeded") throw new PaymentDeclined(intent.id);
        return { paymentIntentId: intent.id };
      }),

    cancelAtPeriodEnd: (id) =>
      call(async () => toSubscription(await stripe.subscriptions.update(id, { cancel_at_period_end: true }))),

    changePrice: (id, change) =>
      call(async () => {
        const sub = await stripe.subscriptions.update(
          id,
          {
            items: [{ id: change.itemId, price: change.priceId }],
            proration_behavior: change.how === "prorate" ? "always_invoice" : "none",
            payment_behavior: change.how === "next_renewal" ? "allow_incomplete" : "error_if_incomplete",
            ...(change.how === "end_trial" && { trial_end: "now" as const }),
            expand: ["latest_invoice"],
          },
          { idempotencyKey: change.idempotencyKey },
        );
        const invoice = typeof sub.latest_invoice === "object" ? sub.latest_invoice : null;
        const charged = change.how !== "next_renewal" && invoice ? invoice.amount_paid : 0;
        return { subscription: toSubscription(sub), amountPaidCents: charged };
      }),

    verifyEvent(rawBody, signature) {
      if (!options.webhookSecret) throw new BadSignature("no webhook signing secret is configured");
      let event: Stripe.Event;
      try {
        event = stripe.webhooks.constructEvent(rawBody, signature, options.webhookSecret);
      } catch (err) {
        throw new BadSignature(err instanceof Error ? err.message : "bad signature");
      }
      const object = (event.data as { object?: unknown } | undefined)?.object;
      if (
        typeof event.id !== "string" ||
        typeof event.type !== "string" ||
        typeof object !== "object" ||
        !object
      ) {
        throw new BadSignature("the body is not an event");
      }
      return {
        id: event.id,
        type: event.type,
        created: toDate(event.created) ?? new Date(),
        object: object as Record<string, unknown>,
      };
    },
  };
}

/** The processor of a configuration, or undefined when payments are not configured (503). */
export function processorFromConfig(config: {
  stripeSecretKey: string | undefined;
  stripeWebhookSecret: string | undefined;
  stripeApiBase: string | undefined;
}): PaymentProcessor | undefined {
  if (!config.stripeSecretKey) return undefined;
  return createStripeProcessor({
    secretKey: config.stripeSecretKey,
    webhookSecret: config.stripeWebhookSecret,
    apiBase: config.stripeApiBase,
  });
}
