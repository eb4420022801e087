import { PLANS, isPlanId } from "../accounts/plans.js";
import { expireCredits, grantCredits, lockAccountCredits, toTenths } from "../credits/ledger.js";
import type { Trx } from "../db/database.js";
import { addOverageSettled, findCustomer, findOverage } from "./repository.js";

/** The processor's smallest charge: overage is collected once it reaches 50 cents. */
export const MIN_CHARGE_CENTS = 50;

/** The budget in credits: dollars at the plan's overage rate (cents per credit), rounded down. */
export function budgetCredits(type: "dollars" | "credits", amount: number, rateCents: number): number {
  return type === "credits" ? amount : Math.floor((amount * 100) / rateCents);
}

/** Overage tenths in cents at a rate of `rateCents` per credit. */
export const overageCents = (tenths: number, rateCents: number): number => (tenths / 10) * rateCents;

/**
 * Makes the account's overage allowance (the ledger's `overage` bucket, which chargeCredits
 * spends after the credits) match its budget for the current period: what is left expires and
 * the budget minus the overage already used this period is granted. Runs under the account's
 * credit lock, so no charge sees a half-made allowance. Called when the budget is set, changed
 * or disabled, and at each renewal (the budget resets).
 */
export async function syncOverageAllowance(trx: Trx, accountId: number, plan: string | null): Promise<void> {
  const { periodStart } = await lockAccountCredits(trx, accountId);
  const customer = await findCustomer(trx, accountId);
  await expireCredits(trx, { accountId, buckets: ["overage"], reason: "overage_budget" });
  const type = customer?.overageBudgetType;
  const amount = customer?.overageBudgetAmount;
  if (!type || !amount || !isPlanId(plan)) return;
  const usage = await findOverage(trx, accountId, periodStart);
  const allowance =
    toTenths(budgetCredits(type, amount, PLANS[plan].creditPriceCents)) - usage.periodUsedTenths;
  await grantCredits(trx, { accountId, bucket: "overage", tenths: allowance, reason: "overage_budget" });
}

/**
 * At renewal, before the new period's allowance: overage not collected that is below the 50-cent
 * minimum is written off (the daily collection takes anything at or above it).
 */
export async function writeOffSmallOverage(trx: Trx, accountId: number, plan: string | null): Promise<void> {
  if (!isPlanId(plan)) return;
  const usage = await findOverage(trx, accountId, new Date());
  const open = usage.usedTenths - usage.collectedTenths - usage.writtenOffTenths;
  if (open > 0 && overageCents(open, PLANS[plan].creditPriceCents) < MIN_CHARGE_CENTS) {
    await addOverageSettled(trx, accountId, { writtenOffTenths: open });
  }
}
