import type { Logger } from "pino";
import { PLANS, isPlanId } from "../accounts/plans.js";
import { findSubscriptionState } from "../accounts/repository.js";
import type { Db, Trx } from "../db/database.js";
import { MIN_CHARGE_CENTS, overageCents, syncOverageAllowance } from "./overage-ledger.js";
import { PaymentDeclined, PaymentFailed, type PaymentProcessor } from "./processor.js";
import {
  addOverageSettled,
  accountsWithOverage,
  findOverage,
  insertPayment,
  lockCustomer,
  updateCustomer,
} from "./repository.js";

/** After this many failed collections in a row the overage budget is disabled. */
export const MAX_OVERAGE_FAILURES = 5;

export interface CollectionResult {
  accountId: number;
  outcome: "charged" | "below_minimum" | "failed" | "disabled" | "nothing";
  amountCents: number;
}

/**
 * The daily collection of overage: for each account with overage not collected yet, at the
 * plan's overage rate, an off-session charge once it reaches the processor's 50-cent minimum
 * (smaller amounts wait; at renewal they are written off, src/billing/lifecycle.ts). Each account
 * is collected in its own transaction holding its billing row, so two runs never charge the same
 * overage twice; the processor's idempotency key (the account, what it had settled before and its
 * failures so far) makes a retried charge charge once. A failed charge counts; the fifth in a row
 * disables the budget (its allowance expires).
 */
export async function collectOverage(
  db: Db,
  processor: PaymentProcessor,
  logger?: Logger,
): Promise<CollectionResult[]> {
  const results: CollectionResult[] = [];
  for (const accountId of await accountsWithOverage(db)) {
    results.push(await collectAccount(db, processor, accountId));
  }
  const charged = results.filter((r) => r.outcome === "charged");
  logger?.info({ accounts: results.length, charged: charged.length }, "overage collected");
  return results;
}

async function collectAccount(
  db: Db,
  processor: PaymentProcessor,
  accountId: number,
): Promise<CollectionResult> {
  return db.transaction().execute(async (trx): Promise<CollectionResult> => {
    const customer = await lockCustomer(trx, accountId);
    const state = await findSubscriptionState(trx, accountId);
    const plan = state && isPlanId(state.plan) ? state.plan : null;
    if (!customer || !plan || !state) return { accountId, outcome: "nothing", amountCents: 0 };
    const usage = await findOverage(trx, accountId, state.periodStart);
    const open = usage.usedTenths - usage.collectedTenths - usage.writtenOffTenths;
    if (open <= 0) return { accountId, outcome: "nothing", amountCents: 0 };
    const cents = overageCents(open, PLANS[plan].creditPriceCents);
    if (cents < MIN_CHARGE_CENTS) return { accountId, outcome: "below_minimum", amountCents: 0 };
    const amountCents = Math.round(cents);
    if (!customer.paymentMethodId)
      return failed(trx, customer.accountId, customer.overageFailures, plan, amountCents);
    try {
      const { paymentIntentId } = await processor.charge({
        customerId: customer.customerId,
        paymentMethodId: customer.paymentMethodId,
        amountCents,
        description: `Overage: ${open / 10} credits`,
        metadata: { kind: "overage", account_id: String(accountId), tenths: String(open) },
        // A retry of this very attempt charges once; an attempt after a failure is a new charge
        // (the processor would answer a repeated key with the stored decline).
        idempotencyKey: `overage-${accountId}-${usage.collectedTenths + usage.writtenOffTenths}-${open}-${customer.overageFailures}`,
      });
      await addOverageSettled(trx, accountId, { collectedTenths: open });
      await insertPayment(trx, {
        accountId,
        kind: "overage",
        paymentIntentId,
        amountCents,
        status: "succeeded",
      });
      if (customer.overageFailures > 0) await updateCustomer(trx, accountId, { overageFailures: 0 });
      return { accountId, outcome: "charged", amountCents };
    } catch (err) {
      if (!(err instanceof PaymentDeclined || err instanceof PaymentFailed)) throw err;
      const intentId = err instanceof PaymentDeclined ? err.paymentIntentId : null;
      await insertPayment(trx, {
        accountId,
        kind: "overage",
        paymentIntentId: intentId,
        amountCents,
        status: "declined",
      });
      return failed(trx, accountId, customer.overageFailures, plan, amountCents);
    }
  });
}

async function failed(
  trx: Trx,
  accountId: number,
  failuresBefore: number,
  plan: string,
  amountCents: number,
): Promise<CollectionResult> {
  const failures = failuresBefore + 1;
  if (failures < MAX_OVERAGE_FAILURES) {
    await updateCustomer(trx, accountId, { overageFailures: failures });
    return { accountId, outcome: "failed", amountCents };
  }
  await updateCustomer(trx, accountId, {
    overageFailures: failures,
    overageBudgetType: null,
    overageBudgetAmount: null,
  });
  await syncOverageAllowance(trx, accountId, plan);
  return { accountId, outcome: "disabled", amountCents };
}
