import { isPlanId, type PlanId } from "../../accounts/plans.js";
import { findSubscriptionState } from "../../accounts/repository.js";
import type { Db } from "../../db/database.js";
import { errors, type ErrorDetail } from "../../http/errors.js";
import { billingErrors } from "../errors.js";
import type { PaymentProcessor } from "../processor.js";
import { findCustomer } from "../repository.js";
import {
  MIN_PURCHASE,
  isWholeCents,
  maxAmount,
  pricePerCreditDollars,
  purchaseSize,
  triggerTenths,
  type AutoTopUpConfig,
  type AutoTopUpUnit,
  type CycleUsage,
  type UnitAmount,
} from "./amounts.js";
import { clearConfig, cycleUsage, findSettings, saveConfig } from "./repository.js";

/** The auto top-up as the API shows it (presenter.ts builds the answer). */
export interface AutoTopUpView {
  enabled: boolean;
  config: AutoTopUpConfig | null;
  usage: CycleUsage;
  periodStart: Date | null;
  periodEnd: Date | null;
  pricePerCredit: number | null;
  hasPaymentMethod: boolean;
  consecutiveFailures: number;
  disabledReason: "payment_declined" | null;
}

/** `GET /auto-top-up`: the configuration, the current billing cycle's purchases, the price per credit. */
export async function getAutoTopUp(db: Db, accountId: number): Promise<AutoTopUpView> {
  const state = await findSubscriptionState(db, accountId);
  if (!state) throw errors.forbidden();
  const plan = isPlanId(state.plan) ? state.plan : null;
  const [settings, customer, usage] = await Promise.all([
    findSettings(db, accountId),
    findCustomer(db, accountId),
    cycleUsage(db, accountId, state.periodStart),
  ]);
  return {
    enabled: settings?.enabled === true,
    config: settings?.config ?? null,
    usage,
    periodStart: state.periodStart,
    periodEnd: state.periodEnd,
    pricePerCredit: plan ? pricePerCreditDollars(plan) : null,
    hasPaymentMethod: Boolean(customer?.paymentMethodId),
    consecutiveFailures: settings?.consecutiveFailures ?? 0,
    disabledReason: settings?.disabledReason ?? null,
  };
}

/** `PATCH /auto-top-up` as sent (schema-checked). */
export interface AutoTopUpUpdate {
  enabled: boolean;
  triggerType?: AutoTopUpUnit | null;
  triggerAmount?: number | null;
  purchaseType?: AutoTopUpUnit | null;
  purchaseAmount?: number | null;
  capType?: AutoTopUpUnit | null;
  capAmount?: number | null;
}

/**
 * `PATCH /auto-top-up`: replaces the whole configuration. `{enabled: false}` turns it off and
 * clears it (always allowed, other fields ignored). `enabled: true` needs the trigger and the
 * purchase (400 `validation_error` naming each missing or wrong field); it is refused during a
 * trial, without an active paid plan or without a saved payment method (400 `bad_request`), and
 * without a payment processor (503). Amounts are checked against the plan last.
 */
export async function updateAutoTopUp(
  db: Db,
  processor: PaymentProcessor | undefined,
  accountId: number,
  body: AutoTopUpUpdate,
): Promise<AutoTopUpView> {
  if (!body.enabled) {
    await clearConfig(db, accountId);
    return getAutoTopUp(db, accountId);
  }
  const config = configOf(body);
  const state = await findSubscriptionState(db, accountId);
  const plan = state && isPlanId(state.plan) ? state.plan : null;
  if (!state || !plan) throw errors.badRequest("Auto top-up needs a paid plan.");
  if (state.subscriptionStatus === "trialing") {
    throw errors.badRequest(
      "Auto top-up cannot be enabled during the trial; activate the plan first (POST /subscription/change-plan).",
    );
  }
  if (state.subscriptionStatus !== "active") {
    throw errors.badRequest("Auto top-up needs an active paid subscription.");
  }
  const customer = await findCustomer(db, accountId);
  if (!customer?.paymentMethodId) {
    throw errors.badRequest("Auto top-up needs a saved payment method; none is on file for this account.");
  }
  checkAgainstPlan(plan, config);
  if (!processor) {
    throw billingErrors.paymentUnavailable(
      "Payment processing is not available, so auto top-up cannot be enabled; nothing was changed.",
    );
  }
  await saveConfig(db, accountId, config, triggerTenths(plan, config.trigger));
  return getAutoTopUp(db, accountId);
}

const invalid = (details: ErrorDetail[]) =>
  errors.validation(
    `Invalid request: ${details.map((d) => `${d.path.join(".")}: ${d.message}`).join("; ")}`,
    details,
  );

const detail = (field: string, message: string): ErrorDetail => ({ path: ["body", field], message });

/** A unit amount's own rules: present, above 0, whole credits or whole cents. */
function amountProblems(field: string, type: AutoTopUpUnit, amount: number): ErrorDetail[] {
  if (amount <= 0) return [detail(field, "must be above 0")];
  if (type === "credits" && !Number.isInteger(amount))
    return [detail(field, "must be a whole number of credits")];
  if (type === "dollars" && !isWholeCents(amount))
    return [detail(field, "must have at most 2 decimals (whole cents)")];
  return [];
}

/** The configuration of an `enabled: true` body, or 400 `validation_error` with every problem. */
function configOf(body: AutoTopUpUpdate): AutoTopUpConfig {
  const problems: ErrorDetail[] = [];
  const required = ["triggerType", "triggerAmount", "purchaseType", "purchaseAmount"] as const;
  for (const field of required) {
    if (body[field] === undefined || body[field] === null) {
      problems.push(detail(field, "is required when enabled is true"));
    }
  }
  const hasCapType = body.capType !== undefined && body.capType !== null;
  const hasCapAmount = body.capAmount !== undefined && body.capAmount !== null;
  if (hasCapType && !hasCapAmount) problems.push(detail("capAmount", "is required with capType"));
  if (!hasCapType && hasCapAmount) problems.push(detail("capType", "is required with capAmount"));
  if (problems.length > 0) throw invalid(problems);
  const trigger: UnitAmount = { type: body.triggerType!, amount: body.triggerAmount! };
  const purchase: UnitAmount = { type: body.purchaseType!, amount: body.purchaseAmount! };
  const cap: UnitAmount | null = hasCapType ? { type: body.capType!, amount: body.capAmount! } : null;
  problems.push(
    ...amountProblems("triggerAmount", trigger.type, trigger.amount),
    ...amountProblems("purchaseAmount", purchase.type, purchase.amount),
    ...(cap ? amountProblems("capAmount", cap.type, cap.amount) : []),
  );
  const purchaseValid = !problems.some((p) => p.path[1] === "purchaseAmount");
  if (purchaseValid && purchase.amount < MIN_PURCHASE[purchase.type]) {
    problems.push(
      detail("purchaseAmount", `must be at least ${MIN_PURCHASE[purchase.type]} ${purchase.type}`),
    );
  }
  if (problems.length > 0) throw invalid(problems);
  return { trigger, purchase, cap };
}

/** The plan's limits: at most 5 times its monthly credits (or their dollar value); a cap fits a purchase. */
function checkAgainstPlan(plan: PlanId, config: AutoTopUpConfig): void {
  const problems: ErrorDetail[] = [];
  for (const [field, value] of [
    ["triggerAmount", config.trigger],
    ["purchaseAmount", config.purchase],
  ] as const) {
    const max = maxAmount(plan, value.type);
    if (value.amount > max) {
      problems.push(
        detail(
          field,
          `must be at most ${max} ${value.type} on the ${plan} plan (5 times its monthly credits)`,
        ),
      );
    }
  }
  const size = purchaseSize(plan, config.purchase);
  if (size.credits < 1) problems.push(detail("purchaseAmount", "buys no credit at the plan's price"));
  const cap = config.cap;
  if (cap) {
    const one = cap.type === "credits" ? size.credits : size.amountCents / 100;
    if (cap.amount < one) {
      problems.push(detail("capAmount", `must allow at least one purchase (${one} ${cap.type})`));
    }
  }
  if (problems.length > 0) throw invalid(problems);
}
