import { PLANS, isPlanId } from "../accounts/plans.js";
import { findSubscriptionState } from "../accounts/repository.js";
import { fromTenths } from "../credits/ledger.js";
import type { Db } from "../db/database.js";
import { errors } from "../http/errors.js";
import { MAX_PURCHASE_MULTIPLE } from "./credit-purchase.js";
import { budgetCredits, overageCents, syncOverageAllowance } from "./overage-ledger.js";
import { findCustomer, findOverage, updateCustomer } from "./repository.js";

/** The overage budget as the API shows it. */
export interface OverageView {
  enabled: boolean;
  budgetType: "dollars" | "credits";
  budgetAmount: number | null;
  budgetCredits: number | null;
  usedCredits: number;
  remainingCredits: number | null;
  accruedCents: number;
  overageRate: number | null;
  maxBudgetCredits: number | null;
  maxBudgetDollars: number | null;
  hasPaymentMethod: boolean;
  periodStart: Date | null;
  periodEnd: Date | null;
}

/** `GET /overage-budget`: the configuration and the usage of the current billing period. */
export async function getOverage(db: Db, accountId: number): Promise<OverageView> {
  const state = await findSubscriptionState(db, accountId);
  if (!state) throw errors.forbidden();
  const plan = isPlanId(state.plan) ? state.plan : null;
  const customer = await findCustomer(db, accountId);
  const usage = await findOverage(db, accountId, state.periodStart);
  const rate = plan ? PLANS[plan].creditPriceCents : null;
  const type = customer?.overageBudgetType ?? null;
  const amount = customer?.overageBudgetAmount ?? null;
  const enabled = type !== null && amount !== null && amount > 0 && rate !== null;
  const credits = enabled ? budgetCredits(type, amount, rate) : null;
  const used = fromTenths(usage.periodUsedTenths);
  const maxCredits = plan ? PLANS[plan].monthlyCredits * MAX_PURCHASE_MULTIPLE : null;
  const uncollectedTenths = Math.max(0, usage.usedTenths - usage.collectedTenths - usage.writtenOffTenths);
  return {
    enabled,
    budgetType: enabled ? type : "dollars",
    budgetAmount: enabled ? amount : null,
    budgetCredits: credits,
    usedCredits: used,
    remainingCredits: credits === null ? null : Math.max(0, credits - used),
    accruedCents: rate === null ? 0 : Math.round(overageCents(uncollectedTenths, rate) * 100) / 100,
    overageRate: rate,
    maxBudgetCredits: maxCredits,
    maxBudgetDollars: maxCredits !== null && rate !== null ? Math.floor((maxCredits * rate) / 100) : null,
    hasPaymentMethod: Boolean(customer?.paymentMethodId),
    periodStart: state.periodStart,
    periodEnd: state.periodEnd,
  };
}

/** `PATCH /overage-budget` as sent (schema-checked). */
export interface OverageUpdate {
  enabled?: boolean;
  budgetType?: "dollars" | "credits";
  budgetAmount?: number | null;
}

/**
 * The real service's form, `{enabled, budgetType?, budgetAmount?}`, as our form: `enabled: false`
 * is `budgetAmount: null` (an amount above 0 beside it is 400); `enabled: true` needs an amount
 * above 0 and its unit defaults to `dollars`. Without `enabled` the body is our form already.
 */
function withoutEnabled(body: OverageUpdate): Omit<OverageUpdate, "enabled"> {
  const { enabled, ...rest } = body;
  if (enabled === undefined) return rest;
  const amount = rest.budgetAmount;
  const positive = amount !== undefined && amount !== null && amount > 0;
  if (enabled === false) {
    if (positive) {
      const message = "must be absent, 0 or null when enabled is false";
      throw errors.validation(`Invalid request: body.budgetAmount: ${message}`, [
        { path: ["body", "budgetAmount"], message },
      ]);
    }
    return { budgetAmount: null };
  }
  if (!positive) {
    const message = "must be a whole number of at least 1 when enabled is true";
    throw errors.validation(`Invalid request: body.budgetAmount: ${message}`, [
      { path: ["body", "budgetAmount"], message },
    ]);
  }
  return { budgetType: rest.budgetType ?? "dollars", budgetAmount: amount };
}

/**
 * `PATCH /overage-budget`: `{enabled: false}` disables, `{enabled: true, budgetAmount,
 * budgetType?}` sets (see withoutEnabled); otherwise only the fields sent change. An amount of 0
 * or null disables overage and clears the configuration (always allowed; overage already used is
 * still collected); enabling or changing needs an active (not trialing) plan and a saved payment
 * method; the amount is at most 5 times the plan's monthly credits, or their dollar value at the
 * overage rate.
 */
export async function updateOverage(db: Db, accountId: number, sent: OverageUpdate): Promise<OverageView> {
  const body = withoutEnabled(sent);
  const hasType = body.budgetType !== undefined;
  const hasAmount = "budgetAmount" in body && body.budgetAmount !== undefined;
  if (!hasType && !hasAmount) throw errors.badRequest("Send `budgetType`, `budgetAmount` or both.");
  const customer = await findCustomer(db, accountId);
  if (hasAmount && (body.budgetAmount === null || body.budgetAmount === 0)) {
    if (customer) {
      await db.transaction().execute(async (trx) => {
        await updateCustomer(trx, accountId, {
          overageBudgetType: null,
          overageBudgetAmount: null,
          overageFailures: 0,
        });
        await syncOverageAllowance(trx, accountId, null);
      });
    }
    return getOverage(db, accountId);
  }
  const current = customer?.overageBudgetAmount ?? null;
  const amount = hasAmount ? body.budgetAmount! : current;
  if (amount === null) throw errors.badRequest("No budget is set: send `budgetAmount` with `budgetType`.");
  const type = body.budgetType ?? customer?.overageBudgetType ?? "dollars";
  const state = await findSubscriptionState(db, accountId);
  const plan = state && isPlanId(state.plan) ? state.plan : null;
  if (!state || !plan || state.subscriptionStatus !== "active") {
    throw errors.badRequest("An overage budget needs an active paid plan (not during the trial).");
  }
  if (!customer?.paymentMethodId) {
    throw errors.badRequest("An overage budget needs a saved payment method.");
  }
  const maxCredits = PLANS[plan].monthlyCredits * MAX_PURCHASE_MULTIPLE;
  const max = type === "credits" ? maxCredits : Math.floor((maxCredits * PLANS[plan].creditPriceCents) / 100);
  if (amount > max) {
    const message = `must be at most ${max} ${type} on the ${plan} plan (5 times its monthly credits)`;
    throw errors.validation(`Invalid request: body.budgetAmount: ${message}`, [
      { path: ["body", "budgetAmount"], message },
    ]);
  }
  await db.transaction().execute(async (trx) => {
    await updateCustomer(trx, accountId, {
      overageBudgetType: type,
      overageBudgetAmount: amount,
      overageFailures: 0,
    });
    await syncOverageAllowance(trx, accountId, plan);
  });
  return getOverage(db, accountId);
}
