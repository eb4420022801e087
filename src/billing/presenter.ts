import type { JsonBody } from "../http/contract.js";
import type { OverageView } from "./overage.js";
import type { StartedPurchase } from "./purchase.js";
import type { Cancellation, PlanChangeResult } from "./subscription.js";

type PurchaseBody = JsonBody<"purchase", 201>["data"];
type OverageBody = JsonBody<"getOverageBudget", 200>["data"];
type CancellationBody = JsonBody<"cancelSubscription", 200>["data"];
type PlanChangeBody = JsonBody<"changePlan", 200>["data"];

const TRIAL_NOTE =
  "A payment method is required; nothing is charged until the trial ends, then the plan renews monthly. All charges are final, no refunds.";
const NO_TRIAL_NOTE =
  "The plan is charged at checkout and renews monthly. All charges are final, no refunds.";

export function toPurchaseBody(p: StartedPurchase): PurchaseBody {
  const trial: PurchaseBody["trial"] = {
    eligible: p.trial.eligible,
    days: p.trial.days,
    credits: p.trial.credits,
    endsAt: p.trial.endsAt?.toISOString() ?? null,
    note: p.trial.eligible ? TRIAL_NOTE : NO_TRIAL_NOTE,
    ...(p.trial.reason && { reason: p.trial.reason }),
  };
  return {
    checkoutUrl: p.checkoutUrl,
    expiresAt: p.expiresAt.toISOString(),
    plan: p.plan,
    trial,
    message: p.confirmByEmail
      ? "This e-mail address already has an account: the checkout link was sent to it. Confirm the purchase from that e-mail; the API key is then sent by e-mail."
      : "Complete the checkout at checkoutUrl before it expires. The API key is then sent by e-mail to the purchase address; it is never returned by the API.",
  };
}

export function toOverageBody(v: OverageView): OverageBody {
  return {
    ...v,
    periodStart: v.periodStart?.toISOString() ?? null,
    periodEnd: v.periodEnd?.toISOString() ?? null,
  };
}

export function toCancellationBody(c: Cancellation): CancellationBody {
  const end = c.currentPeriodEnd?.toISOString();
  return {
    status: c.status as CancellationBody["status"],
    plan: c.plan,
    cancelAtPeriodEnd: true,
    currentPeriodEnd: end ?? null,
    message:
      (c.alreadyCanceling
        ? "The subscription was already set to cancel. "
        : "The subscription will cancel at the end of the current period. ") +
      `Access continues until ${end ?? "then"}; the remaining credit balance is forfeited when it ends.`,
  };
}

const CHANGE_MESSAGES: Record<PlanChangeResult["change"], (r: PlanChangeResult) => string> = {
  upgrade: (r) =>
    `Upgraded to ${r.targetPlan} now; ${(r.amountChargedCents / 100).toFixed(2)} USD was charged for the rest of the period.`,
  downgrade: (r) =>
    `The plan changes to ${r.targetPlan} at the renewal on ${r.effectiveAt.toISOString()}; the remaining balance expires then. Nothing was charged.`,
  trial_switch: (r) => `The trial continues on the ${r.targetPlan} plan; nothing was charged.`,
  trial_activation: (r) =>
    `The trial ended and the ${r.targetPlan} plan is active; ${(r.amountChargedCents / 100).toFixed(2)} USD was charged. Unused trial credits became permanent credits.`,
};

export function toPlanChangeBody(r: PlanChangeResult): PlanChangeBody {
  return {
    previousPlan: r.previousPlan,
    targetPlan: r.targetPlan,
    subscriptionPlan: r.subscriptionPlan,
    subscriptionStatus: r.subscriptionStatus as PlanChangeBody["subscriptionStatus"],
    change: r.change,
    effectiveAt: r.effectiveAt.toISOString(),
    amountChargedCents: r.amountChargedCents,
    totalCreditsRemaining: r.totalCreditsRemaining,
    message: CHANGE_MESSAGES[r.change](r),
  };
}
