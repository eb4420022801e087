import { PLANS, PLAN_IDS, isPlanId, monthlyGrant, type PlanId } from "../accounts/plans.js";
import { findSubscriptionState, setSubscriptionState } from "../accounts/repository.js";
import {
  expireCredits,
  fromTenths,
  grantCredits,
  readBalance,
  creditTenths,
  toTenths,
} from "../credits/ledger.js";
import type { Db } from "../db/database.js";
import { errors } from "../http/errors.js";
import { billingErrors, processorFailure } from "./errors.js";
import { syncOverageAllowance } from "./overage-ledger.js";
import type { PaymentProcessor } from "./processor.js";
import { findCustomer, tryLockPlanChange, updateCustomer } from "./repository.js";

export interface Cancellation {
  status: string;
  plan: PlanId | null;
  currentPeriodEnd: Date | null;
  alreadyCanceling: boolean;
}

/**
 * `POST /subscription/cancel`: the subscription ends with its current period (the processor is
 * told; access continues until then, when the balance is forfeited by the subscription's end
 * event). Repeating it answers the same and calls nothing.
 */
export async function cancelSubscription(
  db: Db,
  processor: PaymentProcessor | undefined,
  accountId: number,
): Promise<Cancellation> {
  const state = await findSubscriptionState(db, accountId);
  if (!state) throw errors.forbidden();
  const plan = isPlanId(state.plan) ? state.plan : null;
  const customer = await findCustomer(db, accountId);
  const answer = (alreadyCanceling: boolean): Cancellation => ({
    status: state.subscriptionStatus,
    plan,
    currentPeriodEnd: state.periodEnd,
    alreadyCanceling,
  });
  if (customer?.cancelAtPeriodEnd) return answer(true);
  if (!processor) throw billingErrors.paymentUnavailable();
  if (customer?.subscriptionId) {
    await processor.cancelAtPeriodEnd(customer.subscriptionId).catch((err: unknown) => {
      throw processorFailure(err, { failedCode: false });
    });
    await updateCustomer(db, accountId, { cancelAtPeriodEnd: true, pendingPlan: null });
  }
  return answer(false);
}

export type PlanChangeKind = "upgrade" | "downgrade" | "trial_switch" | "trial_activation";

export interface PlanChangeResult {
  previousPlan: PlanId;
  targetPlan: PlanId;
  subscriptionPlan: PlanId;
  subscriptionStatus: string;
  change: PlanChangeKind;
  effectiveAt: Date;
  amountChargedCents: number;
  totalCreditsRemaining: number;
}

const rank = (plan: PlanId) => PLAN_IDS.indexOf(plan);

/**
 * `POST /subscription/change-plan`. The whole change runs in one transaction holding the
 * account's plan-change lock (a second change meanwhile is 409 `plan_change_in_progress`); the
 * processor is called inside it, so a decline or failure rolls everything back: nothing changes.
 * - active, larger plan: the prorated difference is charged now; the plan changes now and the
 *   difference of the monthly allowances is granted for the rest of the period;
 * - active, smaller plan: the processor bills the new price from the renewal; the plan changes at
 *   the renewal, when the balance expires (src/billing/lifecycle.ts);
 * - trialing, `switch_trial`: no charge; the trial allowance becomes half the new plan's monthly
 *   credits minus what was used;
 * - trialing, `activate_now`: the trial ends and the full price is charged now; the trial credits
 *   left become permanent credits and the new plan's monthly credits are granted.
 */
export async function changePlan(
  db: Db,
  processor: PaymentProcessor | undefined,
  input: { accountId: number; targetPlan: string; mode: "switch_trial" | "activate_now" | undefined },
): Promise<PlanChangeResult> {
  if (!isPlanId(input.targetPlan)) throw billingErrors.invalidPlan("targetPlan");
  const target = input.targetPlan;
  const state = await findSubscriptionState(db, input.accountId);
  const current = state && isPlanId(state.plan) ? state.plan : null;
  if (!state || !current) throw errors.forbidden();
  if (current === target) throw errors.badRequest(`The account is already on the ${target} plan.`);
  const trialing = state.subscriptionStatus === "trialing";
  if (input.mode !== undefined && !trialing) {
    throw errors.badRequest("`mode` applies only during a trial.");
  }
  const customer = await findCustomer(db, input.accountId);
  if (customer?.cancelAtPeriodEnd) {
    throw errors.badRequest(
      "The subscription is set to cancel at the end of the period; its plan cannot change.",
    );
  }
  if (!processor) throw billingErrors.paymentUnavailable();
  if (!customer?.subscriptionId) {
    throw errors.badRequest("The subscription was not bought through the API; its plan cannot change here.");
  }
  const prices = await processor.planPrices().catch((err: unknown) => {
    throw processorFailure(err, { failedCode: true });
  });
  const price = prices.get(target);
  if (!price) throw billingErrors.planRetired(target);
  const subscriptionId = customer.subscriptionId;

  return db.transaction().execute(async (trx) => {
    if (!(await tryLockPlanChange(trx, input.accountId))) throw billingErrors.planChangeInProgress();
    const locked = await findSubscriptionState(trx, input.accountId, true);
    if (!locked || locked.plan !== current || locked.subscriptionStatus !== state.subscriptionStatus) {
      throw billingErrors.planChangeInProgress();
    }
    const sub = await processor.getSubscription(subscriptionId).catch((err: unknown) => {
      throw processorFailure(err, { failedCode: true });
    });
    if (!sub.itemId)
      throw billingErrors.paymentFailed("The subscription has no plan item at the payment processor.");
    const kind: PlanChangeKind = trialing
      ? input.mode === "activate_now"
        ? "trial_activation"
        : "trial_switch"
      : rank(target) > rank(current)
        ? "upgrade"
        : "downgrade";
    const how = kind === "upgrade" ? "prorate" : kind === "trial_activation" ? "end_trial" : "next_renewal";
    const changed = await processor
      .changePrice(subscriptionId, {
        itemId: sub.itemId,
        priceId: price.priceId,
        how,
        idempotencyKey: `plan-${input.accountId}-${subscriptionId}-${target}-${kind}-${Date.now()}`,
      })
      .catch((err: unknown) => {
        throw processorFailure(err, { failedCode: true });
      });
    const now = new Date();
    const balance = await readBalance(trx, input.accountId, locked.periodStart);
    let effectiveAt = now;
    let inForce: PlanId = target;
    let status = locked.subscriptionStatus;
    if (kind === "downgrade") {
      await updateCustomer(trx, input.accountId, { pendingPlan: target });
      effectiveAt = locked.periodEnd ?? changed.subscription.periodEnd ?? now;
      inForce = current;
    } else if (kind === "upgrade") {
      await setSubscriptionState(trx, input.accountId, { plan: target });
      await updateCustomer(trx, input.accountId, { pendingPlan: null });
      await grantCredits(trx, {
        accountId: input.accountId,
        bucket: "monthly",
        tenths: toTenths(PLANS[target].monthlyCredits - PLANS[current].monthlyCredits),
        reason: "plan_upgrade",
        reference: subscriptionId,
      });
      // A dollar budget buys a different number of credits at the new plan's rate.
      await syncOverageAllowance(trx, input.accountId, target);
    } else if (kind === "trial_switch") {
      await setSubscriptionState(trx, input.accountId, { plan: target });
      const allowance = toTenths(monthlyGrant(target, true)) - balance.monthlyUsedTenths;
      const difference = Math.max(0, allowance) - balance.monthlyRemainingTenths;
      if (difference > 0) {
        await grantCredits(trx, {
          accountId: input.accountId,
          bucket: "monthly",
          tenths: difference,
          reason: "trial_switch",
          reference: subscriptionId,
        });
      } else if (difference < 0) {
        await expireCredits(trx, {
          accountId: input.accountId,
          buckets: ["monthly"],
          reason: "trial_switch",
          reference: subscriptionId,
        });
        await grantCredits(trx, {
          accountId: input.accountId,
          bucket: "monthly",
          tenths: Math.max(0, allowance),
          reason: "trial_switch",
          reference: subscriptionId,
        });
      }
    } else {
      const moved = await expireCredits(trx, {
        accountId: input.accountId,
        buckets: ["monthly"],
        reason: "trial_activation",
        reference: subscriptionId,
      });
      await grantCredits(trx, {
        accountId: input.accountId,
        bucket: "permanent",
        tenths: moved.monthly,
        reason: "trial_conversion",
        reference: subscriptionId,
      });
      status = "active";
      await setSubscriptionState(trx, input.accountId, {
        plan: target,
        subscriptionStatus: status,
        periodStart: changed.subscription.periodStart ?? now,
        periodEnd: changed.subscription.periodEnd,
      });
      await grantCredits(trx, {
        accountId: input.accountId,
        bucket: "monthly",
        tenths: toTenths(monthlyGrant(target, false)),
        reason: "plan_grant",
        reference: subscriptionId,
      });
    }
    const after = await findSubscriptionState(trx, input.accountId);
    const balanceAfter = await readBalance(trx, input.accountId, after?.periodStart ?? locked.periodStart);
    return {
      previousPlan: current,
      targetPlan: target,
      subscriptionPlan: inForce,
      subscriptionStatus: status,
      change: kind,
      effectiveAt,
      amountChargedCents: changed.amountPaidCents,
      totalCreditsRemaining: fromTenths(creditTenths(balanceAfter)),
    };
  });
}
