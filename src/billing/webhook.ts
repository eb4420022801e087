import { findSubscriptionState } from "../accounts/repository.js";
import { grantCredits, toTenths } from "../credits/ledger.js";
import type { Db, Trx } from "../db/database.js";
import { activateCheckout, applyEnded, applyPaymentFailed, applyRenewal } from "./lifecycle.js";
import type { PaymentProcessor, ProcessorEvent } from "./processor.js";
import {
  claimGrant,
  eventSeen,
  findCheckout,
  findCustomerBySubscription,
  lockSubscription,
  recordEvent,
  takeDeferredEvents,
  type BillingCustomer,
} from "./repository.js";

/** Events about a subscription, applied once the subscription is known (else deferred). */
const SUBSCRIPTION_EVENTS = new Set([
  "invoice.paid",
  "invoice.payment_failed",
  "customer.subscription.deleted",
]);

const str = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);
const obj = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" ? (value as Record<string, unknown>) : {};
const idOf = (value: unknown): string | null => str(value) ?? str(obj(value).id);
const dateOf = (seconds: unknown): Date | null =>
  typeof seconds === "number" ? new Date(seconds * 1000) : null;

/** The subscription an event is about (invoices name it under `parent` since API 2025-03). */
function subscriptionOf(type: string, object: Record<string, unknown>): string | null {
  if (type.startsWith("customer.subscription.")) return str(object.id);
  const details = obj(obj(object.parent).subscription_details);
  return idOf(details.subscription) ?? idOf(object.subscription);
}

/**
 * Applies one verified processor event exactly once: its id is recorded in the transaction that
 * applies it, so a repeat (or a concurrent delivery of the same event) changes nothing. Events
 * about a subscription whose checkout is not processed yet wait (`deferred`) and are applied,
 * oldest first, when it is: events may arrive in any order.
 */
export async function handleProcessorEvent(
  db: Db,
  processor: PaymentProcessor,
  event: ProcessorEvent,
): Promise<void> {
  if (event.type === "checkout.session.completed") return handleCheckout(db, processor, event);
  if (SUBSCRIPTION_EVENTS.has(event.type)) return handleSubscriptionEvent(db, event);
  if (event.type === "payment_intent.succeeded") return handlePaymentSucceeded(db, event);
  await db.transaction().execute(async (trx) => {
    await recordEvent(trx, { ...event, subscriptionId: null }, "ignored");
  });
}

async function handleCheckout(db: Db, processor: PaymentProcessor, event: ProcessorEvent): Promise<void> {
  if (await eventSeen(db, event.id)) return;
  const session = event.object;
  const sessionId = str(session.id);
  const subscriptionId = idOf(session.subscription);
  const metadata = obj(session.metadata);
  const checkout =
    sessionId && subscriptionId
      ? await findCheckout(db, {
          checkoutId: str(metadata.checkout_id) ?? str(session.client_reference_id),
          sessionId,
        })
      : undefined;
  if (!checkout || !subscriptionId) {
    await db.transaction().execute(async (trx) => {
      await recordEvent(trx, { ...event, subscriptionId }, "ignored");
    });
    return;
  }
  // Read before the transaction: no lock is held while the processor answers.
  const subscription = await processor.getSubscription(subscriptionId);
  await db.transaction().execute(async (trx) => {
    await lockSubscription(trx, subscriptionId);
    if (!(await recordEvent(trx, { ...event, subscriptionId }, "processed"))) return;
    if (checkout.status === "completed") return;
    await activateCheckout(trx, checkout, subscription);
    const customer = await findCustomerBySubscription(trx, subscriptionId);
    if (!customer) return;
    for (const waiting of await takeDeferredEvents(trx, subscriptionId)) {
      await applySubscriptionEvent(trx, customer, waiting.type, obj(waiting.payload), subscriptionId);
    }
  });
}

async function handleSubscriptionEvent(db: Db, event: ProcessorEvent): Promise<void> {
  const subscriptionId = subscriptionOf(event.type, event.object);
  await db.transaction().execute(async (trx) => {
    if (!subscriptionId) {
      await recordEvent(trx, { ...event, subscriptionId }, "ignored");
      return;
    }
    await lockSubscription(trx, subscriptionId);
    const customer = await findCustomerBySubscription(trx, subscriptionId);
    if (!customer) {
      await recordEvent(trx, { ...event, subscriptionId }, "deferred", event.object);
      return;
    }
    if (!(await recordEvent(trx, { ...event, subscriptionId }, "processed"))) return;
    await applySubscriptionEvent(trx, customer, event.type, event.object, subscriptionId);
  });
}

async function applySubscriptionEvent(
  trx: Trx,
  customer: BillingCustomer,
  type: string,
  object: Record<string, unknown>,
  subscriptionId: string,
): Promise<void> {
  if (type === "invoice.paid") {
    const reason = str(object.billing_reason);
    // The first invoice is paid with the checkout (handled there); a proration with the change.
    if (reason !== "subscription_cycle") return;
    const line = obj((obj(object.lines).data as unknown[] | undefined)?.[0]);
    const period = obj(line.period);
    await applyRenewal(trx, customer, {
      id: str(object.id) ?? subscriptionId,
      billingReason: reason,
      periodStart: dateOf(period.start),
      periodEnd: dateOf(period.end),
    });
  } else if (type === "invoice.payment_failed") {
    await applyPaymentFailed(trx, customer);
  } else if (type === "customer.subscription.deleted") {
    await applyEnded(trx, customer, subscriptionId);
  }
}

/**
 * A credit purchase's payment intent succeeded. The request that charged grants the credits in
 * the same transaction as its record of the charge; this event grants them only if that request
 * never committed (a crash between the charge and the commit): billing_grants decides.
 */
async function handlePaymentSucceeded(db: Db, event: ProcessorEvent): Promise<void> {
  const intent = event.object;
  const metadata = obj(intent.metadata);
  const intentId = str(intent.id);
  const accountId = Number(metadata.account_id);
  const credits = Number(metadata.credits);
  await db.transaction().execute(async (trx) => {
    if (!(await recordEvent(trx, { ...event, subscriptionId: null }, "processed"))) return;
    if (
      metadata.kind !== "credits" ||
      !intentId ||
      !Number.isInteger(accountId) ||
      !Number.isInteger(credits)
    ) {
      return;
    }
    const exists = await findSubscriptionState(trx, accountId);
    if (!exists || !(await claimGrant(trx, { paymentIntentId: intentId, accountId, credits }))) return;
    await grantCredits(trx, {
      accountId,
      bucket: "permanent",
      tenths: toTenths(credits),
      reason: "credit_purchase",
      reference: intentId,
    });
  });
}
