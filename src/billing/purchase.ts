import { PLANS, isPlanId, monthlyGrant, type PlanId } from "../accounts/plans.js";
import { findSubscriptionByEmail } from "../accounts/repository.js";
import type { Db } from "../db/database.js";
import { errors } from "../http/errors.js";
import { domainOf, isValidEmail, trialKey } from "./email.js";
import { isDisposableDomain } from "./disposable.js";
import { billingErrors, processorFailure } from "./errors.js";
import { queueConfirmMail } from "./mails.js";
import type { PaymentProcessor } from "./processor.js";
import { insertCheckout, setCheckoutSession, trialUsed } from "./repository.js";

/** Length of a trial. */
export const TRIAL_DAYS = 14;
/** A checkout session (or an e-mailed confirmation link) lives 24 hours. */
const CHECKOUT_LIFETIME_MS = 24 * 60 * 60 * 1000;

export type TrialReason =
  "not_requested" | "plan_not_eligible" | "trial_already_used" | "currently_subscribed";

/** The trial a checkout offers. */
export interface TrialOffer {
  eligible: boolean;
  days: number;
  credits: number;
  endsAt: Date | null;
  reason?: TrialReason;
}

/** A purchase started. */
export interface StartedPurchase {
  checkoutUrl: string | null;
  expiresAt: Date;
  plan: PlanId;
  trial: TrialOffer;
  /** The checkout link went to the address by e-mail (it already has an account). */
  confirmByEmail: boolean;
}

/**
 * `POST /purchase`: checks the address and plan, decides the trial, opens a hosted checkout
 * session. For an address that already has an account (without a subscription) the checkout
 * link is e-mailed to it instead of answered: the purchase is confirmed from that mailbox.
 */
export async function startPurchase(
  db: Db,
  processor: PaymentProcessor | undefined,
  input: { email: string; plan: string; trial: boolean; publicBaseUrl: string },
): Promise<StartedPurchase> {
  const email = input.email.trim();
  if (!isValidEmail(email)) throw billingErrors.invalidEmail();
  if (!isPlanId(input.plan)) throw billingErrors.invalidPlan("plan");
  const plan = input.plan;
  if (isDisposableDomain(domainOf(email))) throw billingErrors.disposableEmail();
  if (!processor) throw billingErrors.paymentUnavailable();

  const prices = await processor.planPrices().catch((err: unknown) => {
    throw processorFailure(err, { failedCode: false });
  });
  const price = prices.get(plan);
  if (!price) throw billingErrors.planRetired(plan);

  const account = await findSubscriptionByEmail(db, email);
  if (
    account &&
    account.plan !== null &&
    ["active", "trialing", "past_due"].includes(account.subscriptionStatus)
  ) {
    throw billingErrors.alreadySubscribed();
  }
  const trial = await trialOffer(db, plan, input.trial, email, account?.trialUsed ?? false);
  const expiresAt = new Date(Date.now() + CHECKOUT_LIFETIME_MS);
  const checkoutId = await insertCheckout(db, {
    email,
    plan,
    trial: trial.eligible,
    accountId: account?.accountId ?? null,
    expiresAt,
  });
  const session = await processor
    .createCheckout({
      checkoutId,
      email,
      priceId: price.priceId,
      trialDays: trial.eligible ? TRIAL_DAYS : 0,
      expiresAt,
      successUrl: `${input.publicBaseUrl}/?checkout=complete`,
      cancelUrl: `${input.publicBaseUrl}/?checkout=canceled`,
    })
    .catch((err: unknown) => {
      throw processorFailure(err, { failedCode: false });
    });
  if (account) {
    await db.transaction().execute(async (trx) => {
      await setCheckoutSession(trx, checkoutId, session.sessionId, session.url);
      await queueConfirmMail(trx, {
        to: account.email,
        checkoutUrl: session.url,
        plan,
        expiresAt: session.expiresAt,
      });
    });
  } else {
    await setCheckoutSession(db, checkoutId, session.sessionId, session.url);
  }
  return {
    checkoutUrl: account ? null : session.url,
    expiresAt: session.expiresAt,
    plan,
    trial,
    confirmByEmail: account !== undefined,
  };
}

async function trialOffer(
  db: Db,
  plan: PlanId,
  requested: boolean,
  email: string,
  accountTrialUsed: boolean,
): Promise<TrialOffer> {
  const none = (reason: TrialReason): TrialOffer => ({
    eligible: false,
    days: 0,
    credits: 0,
    endsAt: null,
    reason,
  });
  if (!requested) return none("not_requested");
  if (!PLANS[plan].trialEligible) return none("plan_not_eligible");
  if (accountTrialUsed || (await trialUsed(db, trialKey(email)))) return none("trial_already_used");
  return {
    eligible: true,
    days: TRIAL_DAYS,
    credits: monthlyGrant(plan, true),
    endsAt: new Date(Date.now() + TRIAL_DAYS * 24 * 60 * 60 * 1000),
  };
}

/** `POST /claim-key`: current purchases issue no claim token, so every token is unknown. */
export function claimKey(): never {
  throw errors.notFound("Unknown, expired or already used claim token.");
}
