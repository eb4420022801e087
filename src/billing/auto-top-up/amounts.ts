import { PLANS, type PlanId } from "../../accounts/plans.js";
import { MAX_PURCHASE_MULTIPLE } from "../credit-purchase.js";

/** The unit of an auto top-up amount: whole credits, or US dollars with at most 2 decimals. */
export type AutoTopUpUnit = "credits" | "dollars";

/** An amount as configured. */
export interface UnitAmount {
  type: AutoTopUpUnit;
  amount: number;
}

/** The configuration of an enabled auto top-up. */
export interface AutoTopUpConfig {
  trigger: UnitAmount;
  purchase: UnitAmount;
  cap: UnitAmount | null;
}

/** The smallest purchase: 100 credits, or 1 dollar (which may buy fewer than 100 credits). */
export const MIN_PURCHASE = { credits: 100, dollars: 1 } as const;

/** The plan's price of one credit in tenths of a cent (integer: 100, 75, 50, 30, 20). */
const priceTenthsOfCent = (plan: PlanId): number => Math.round(PLANS[plan].creditPriceCents * 10);

/** Whole cents of a dollar amount (it has at most 2 decimals once validated). */
export const centsOf = (dollars: number): number => Math.round(dollars * 100);

/** Whether a dollar amount has at most 2 decimals. */
export const isWholeCents = (dollars: number): boolean => Math.abs(dollars * 100 - centsOf(dollars)) < 1e-6;

/** The most one purchase may buy (and the trigger's upper bound): 5 times the plan's monthly credits, or their dollar value rounded down. */
export function maxAmount(plan: PlanId, type: AutoTopUpUnit): number {
  const credits = PLANS[plan].monthlyCredits * MAX_PURCHASE_MULTIPLE;
  return type === "credits" ? credits : Math.floor((credits * PLANS[plan].creditPriceCents) / 100);
}

/** One purchase: the credits it buys and what it costs (their price, rounded to the cent). */
export interface PurchaseSize {
  credits: number;
  amountCents: number;
}

/** What a purchase of `purchase` buys on `plan`: dollars buy the credits they pay for, rounded down. */
export function purchaseSize(plan: PlanId, purchase: UnitAmount): PurchaseSize {
  const price = priceTenthsOfCent(plan);
  const credits =
    purchase.type === "credits" ? purchase.amount : Math.floor((centsOf(purchase.amount) * 10) / price);
  return { credits, amountCents: Math.round((credits * price) / 10) };
}

/**
 * The trigger in tenths of a credit, as the charging path compares the permanent balance with
 * it (balance < trigger): credits as they are; dollars as the smallest balance whose value at
 * the plan's price is at least the amount.
 */
export function triggerTenths(plan: PlanId, trigger: UnitAmount): number {
  if (trigger.type === "credits") return Math.round(trigger.amount * 10);
  return Math.ceil((centsOf(trigger.amount) * 100) / priceTenthsOfCent(plan));
}

/** What the purchases of a billing cycle add up to. */
export interface CycleUsage {
  purchases: number;
  credits: number;
  amountCents: number;
}

/** Whether one more purchase would take the cycle's purchases past the cap. */
export function passesCap(cap: UnitAmount | null, usage: CycleUsage, next: PurchaseSize): boolean {
  if (!cap) return false;
  if (cap.type === "credits") return usage.credits + next.credits > cap.amount;
  return usage.amountCents + next.amountCents > centsOf(cap.amount);
}

/** The plan's price of one credit in US dollars (`pricePerCredit`). */
export const pricePerCreditDollars = (plan: PlanId): number => PLANS[plan].creditPriceCents / 100;
