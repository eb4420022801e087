import { monthlyGrant, type PlanId, isPlanId } from "../accounts/plans.js";
import {
  findSubscriptionByEmail,
  findSubscriptionState,
  insertAccount,
  setSubscriptionState,
} from "../accounts/repository.js";
import { createApiKey } from "../auth/service.js";
import { expireCredits, grantCredits, toTenths } from "../credits/ledger.js";
import type { Trx } from "../db/database.js";
import { trialKey } from "./email.js";
import { queueKeyMail } from "./mails.js";
import { syncOverageAllowance, writeOffSmallOverage } from "./overage-ledger.js";
import type { ProcessorSubscription } from "./processor.js";
import {
  completeCheckout,
  recordTrial,
  updateCustomer,
  upsertCustomer,
  type BillingCustomer,
  type Checkout,
} from "./repository.js";

/**
 * A completed checkout (in the transaction that records its event): the account (found by the
 * checkout's account or e-mail address, else created), its plan and subscription, the opening
 * credits (half the plan's monthly credits during a trial), a new API key and the mail carrying
 * it. Returns the account id.
 */
export async function activateCheckout(
  trx: Trx,
  checkout: Checkout,
  sub: ProcessorSubscription,
): Promise<number> {
  const plan: PlanId = sub.plan ?? (isPlanId(checkout.plan) ? checkout.plan : "starter");
  const trialing = sub.status === "trialing";
  const status = trialing ? "trialing" : "active";
  const existing = checkout.accountId ?? (await findSubscriptionByEmail(trx, checkout.email))?.accountId;
  const accountId =
    existing ??
    (await insertAccount(trx, {
      email: checkout.email,
      plan,
      subscriptionStatus: status,
      trialUsed: trialing,
    }));
  const state = await findSubscriptionState(trx, accountId, true);
  await setSubscriptionState(trx, accountId, {
    plan,
    subscriptionStatus: status,
    trialUsed: trialing || (state?.trialUsed ?? false),
    periodStart: sub.periodStart ?? new Date(),
    periodEnd: sub.periodEnd,
  });
  await upsertCustomer(trx, {
    accountId,
    customerId: sub.customerId,
    subscriptionId: sub.id,
    paymentMethodId: sub.paymentMethodId,
  });
  if (trialing) await recordTrial(trx, trialKey(checkout.email), accountId);
  await grantCredits(trx, {
    accountId,
    bucket: "monthly",
    tenths: toTenths(monthlyGrant(plan, trialing)),
    reason: trialing ? "trial_grant" : "plan_grant",
    reference: sub.id,
  });
  const { apiKey } = await createApiKey(trx, accountId, "Purchase key");
  await queueKeyMail(trx, {
    to: state?.email ?? checkout.email,
    apiKey,
    plan,
    trialEndsAt: trialing ? sub.trialEnd : null,
  });
  await completeCheckout(trx, checkout.id);
  return accountId;
}

/** A paid invoice of a subscription. */
export interface PaidInvoice {
  id: string;
  billingReason: string | null;
  periodStart: Date | null;
  periodEnd: Date | null;
}

/**
 * A renewal was paid (also the first charge at the end of a trial): the subscription is active
 * for the new period and the plan's monthly credits are granted; unused credits roll over. A
 * downgrade waiting for this renewal takes effect first: the balance expires, then the new
 * plan's allowance is granted. Nothing happens for a subscription that already ended.
 */
export async function applyRenewal(trx: Trx, customer: BillingCustomer, invoice: PaidInvoice): Promise<void> {
  const state = await findSubscriptionState(trx, customer.accountId, true);
  if (!state || state.subscriptionStatus === "canceled") return;
  let plan = isPlanId(state.plan) ? state.plan : null;
  if (customer.pendingPlan && isPlanId(customer.pendingPlan)) {
    await expireCredits(trx, {
      accountId: customer.accountId,
      buckets: ["monthly", "permanent"],
      reason: "plan_downgrade",
      reference: invoice.id,
    });
    plan = customer.pendingPlan;
    await updateCustomer(trx, customer.accountId, { pendingPlan: null });
  }
  if (!plan) return;
  const newer = invoice.periodStart !== null && invoice.periodStart > state.periodStart;
  await setSubscriptionState(trx, customer.accountId, {
    plan,
    subscriptionStatus: "active",
    ...(newer && { periodStart: invoice.periodStart!, periodEnd: invoice.periodEnd }),
  });
  await grantCredits(trx, {
    accountId: customer.accountId,
    bucket: "monthly",
    tenths: toTenths(monthlyGrant(plan, false)),
    reason: "plan_renewal",
    reference: invoice.id,
  });
  // The overage budget resets: a remainder under the processor's minimum is written off, and the
  // new period's allowance is granted.
  if (newer) {
    await writeOffSmallOverage(trx, customer.accountId, plan);
    await syncOverageAllowance(trx, customer.accountId, plan);
  }
}

/** A renewal charge failed: API access is refused (past_due) until an invoice is paid. */
export async function applyPaymentFailed(trx: Trx, customer: BillingCustomer): Promise<void> {
  const state = await findSubscriptionState(trx, customer.accountId, true);
  if (!state || (state.subscriptionStatus !== "active" && state.subscriptionStatus !== "trialing")) return;
  await setSubscriptionState(trx, customer.accountId, { subscriptionStatus: "past_due" });
}

/** The subscription ended: access stops, the balance is forfeited, the overage budget cleared. */
export async function applyEnded(trx: Trx, customer: BillingCustomer, subscriptionId: string): Promise<void> {
  const state = await findSubscriptionState(trx, customer.accountId, true);
  if (!state || state.subscriptionStatus === "canceled") return;
  await expireCredits(trx, {
    accountId: customer.accountId,
    buckets: ["monthly", "permanent", "overage"],
    reason: "subscription_ended",
    reference: subscriptionId,
  });
  await setSubscriptionState(trx, customer.accountId, {
    subscriptionStatus: "canceled",
    periodEnd: new Date(),
  });
  await updateCustomer(trx, customer.accountId, {
    cancelAtPeriodEnd: false,
    pendingPlan: null,
    overageBudgetType: null,
    overageBudgetAmount: null,
  });
}
