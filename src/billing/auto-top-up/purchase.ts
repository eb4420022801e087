import { isPlanId } from "../../accounts/plans.js";
import { findSubscriptionState } from "../../accounts/repository.js";
import { grantCredits, readBalance, toTenths } from "../../credits/ledger.js";
import type { Db, Trx } from "../../db/database.js";
import { PaymentDeclined, PaymentFailed, type PaymentProcessor } from "../processor.js";
import { claimGrant, findCustomer, insertPayment } from "../repository.js";
import { passesCap, purchaseSize, triggerTenths, type PurchaseSize } from "./amounts.js";
import { queueAutoTopUpDisabledMail } from "./mails.js";
import {
  cycleUsage,
  disableAfterDeclines,
  insertPurchase,
  lockSettings,
  releaseClaim,
} from "./repository.js";

/** Declined purchases in a row that turn the auto top-up off (as the overage budget's collections). */
export const MAX_AUTO_TOP_UP_FAILURES = 5;

/**
 * How long after a purchase that was not made (declined, capped, a downgrade pending, no active
 * plan) the next charge may claim again: a card is not tried on every search, and a cap or a
 * downgrade is looked at again within the hour after the renewal.
 */
export const RETRY_DELAY_MS = 60 * 60 * 1000;

export type AutoTopUpOutcome =
  | { outcome: "purchased"; credits: number; amountCents: number }
  | { outcome: "declined" | "disabled"; credits: number; amountCents: number }
  | { outcome: "nothing" | "not_needed" | "capped" | "not_active" | "downgrade_pending" };

/**
 * The purchase a charge claimed (src/credits/charge.ts, claimAutoTopUp), made by the
 * `billing__auto_top_up` job. In one transaction holding the account's settings row (one purchase
 * of an account at a time; charges meanwhile skip the row and claim nothing), it checks again
 * that a purchase is due (enabled and claimed, an active plan without a pending downgrade, the
 * permanent balance still below the trigger, the cycle's cap not passed), charges the saved
 * payment method off-session with the claim's id as the processor's idempotency key (a retried
 * job charges once), and grants the credits as permanent credits in the same transaction.
 *
 * A decline (or another refusal of the processor) is recorded and counted; the next charge may
 * claim again an hour later (`retryDelayMs`); the fifth in a row turns the auto top-up off and
 * e-mails the owner. An unreachable processor throws, rolling everything back with the claim
 * kept: the job is retried with the same idempotency key.
 */
export async function runAutoTopUp(
  db: Db,
  processor: PaymentProcessor,
  accountId: number,
  options: { retryDelayMs?: number } = {},
): Promise<AutoTopUpOutcome> {
  const retryAt = () => new Date(Date.now() + (options.retryDelayMs ?? RETRY_DELAY_MS));
  return db.transaction().execute(async (trx): Promise<AutoTopUpOutcome> => {
    const settings = await lockSettings(trx, accountId);
    if (!settings?.enabled || !settings.config || !settings.pendingId) return { outcome: "nothing" };
    const { config, pendingId } = settings;
    const state = await findSubscriptionState(trx, accountId);
    const plan = state && isPlanId(state.plan) ? state.plan : null;
    if (!state || !plan || state.subscriptionStatus !== "active") {
      await releaseClaim(trx, accountId, { nextAttemptAt: retryAt() });
      return { outcome: "not_active" };
    }
    const customer = await findCustomer(trx, accountId);
    if (customer?.pendingPlan) {
      await releaseClaim(trx, accountId, { nextAttemptAt: retryAt() });
      return { outcome: "downgrade_pending" };
    }
    const balance = await readBalance(trx, accountId, state.periodStart);
    if (balance.permanentTenths >= triggerTenths(plan, config.trigger)) {
      await releaseClaim(trx, accountId);
      return { outcome: "not_needed" };
    }
    const size = purchaseSize(plan, config.purchase);
    if (passesCap(config.cap, await cycleUsage(trx, accountId, state.periodStart), size)) {
      await releaseClaim(trx, accountId, { nextAttemptAt: retryAt() });
      return { outcome: "capped" };
    }
    const record = { accountId, periodStart: state.periodStart, pendingId, ...size };
    if (!customer?.paymentMethodId) {
      return declined(
        trx,
        { ...record, email: state.email, failures: settings.consecutiveFailures },
        null,
        retryAt,
      );
    }
    let paymentIntentId: string;
    try {
      ({ paymentIntentId } = await processor.charge({
        customerId: customer.customerId,
        paymentMethodId: customer.paymentMethodId,
        amountCents: size.amountCents,
        description: `Auto top-up: ${size.credits} credits`,
        metadata: {
          kind: "auto_top_up",
          account_id: String(accountId),
          credits: String(size.credits),
          pending_id: pendingId,
        },
        idempotencyKey: `auto-top-up-${pendingId}`,
      }));
    } catch (err) {
      if (!(err instanceof PaymentDeclined || err instanceof PaymentFailed)) throw err;
      const intentId = err instanceof PaymentDeclined ? err.paymentIntentId : null;
      return declined(
        trx,
        { ...record, email: state.email, failures: settings.consecutiveFailures },
        intentId,
        retryAt,
      );
    }
    if (await claimGrant(trx, { paymentIntentId, accountId, credits: size.credits })) {
      await grantCredits(trx, {
        accountId,
        bucket: "permanent",
        tenths: toTenths(size.credits),
        reason: "auto_top_up",
        reference: paymentIntentId,
      });
    }
    await insertPurchase(trx, { ...record, status: "succeeded", paymentIntentId });
    await insertPayment(trx, {
      accountId,
      kind: "auto_top_up",
      paymentIntentId,
      amountCents: size.amountCents,
      status: "succeeded",
    });
    await releaseClaim(trx, accountId, { consecutiveFailures: 0, nextAttemptAt: null });
    return { outcome: "purchased", ...size };
  });
}

/** Records a refused purchase and counts it; the fifth in a row turns the auto top-up off and mails the owner. */
async function declined(
  trx: Trx,
  attempt: PurchaseSize & {
    accountId: number;
    periodStart: Date;
    pendingId: string;
    email: string;
    failures: number;
  },
  paymentIntentId: string | null,
  retryAt: () => Date,
): Promise<AutoTopUpOutcome> {
  const { accountId, credits, amountCents } = attempt;
  await insertPurchase(trx, { ...attempt, status: "declined", paymentIntentId });
  await insertPayment(trx, {
    accountId,
    kind: "auto_top_up",
    paymentIntentId,
    amountCents,
    status: "declined",
  });
  const failures = attempt.failures + 1;
  if (failures < MAX_AUTO_TOP_UP_FAILURES) {
    await releaseClaim(trx, accountId, { consecutiveFailures: failures, nextAttemptAt: retryAt() });
    return { outcome: "declined", credits, amountCents };
  }
  await disableAfterDeclines(trx, accountId, failures);
  await queueAutoTopUpDisabledMail(trx, { to: attempt.email, declines: failures, credits, amountCents });
  return { outcome: "disabled", credits, amountCents };
}
