import { createHash } from "node:crypto";
import { PLANS, isPlanId } from "../accounts/plans.js";
import { findSubscriptionState } from "../accounts/repository.js";
import { fromTenths, grantCredits, readBalance, creditTenths, toTenths } from "../credits/ledger.js";
import type { Db } from "../db/database.js";
import { ApiError, errors } from "../http/errors.js";
import { billingErrors, processorFailure } from "./errors.js";
import { PaymentDeclined, type PaymentProcessor } from "./processor.js";
import {
  claimGrant,
  claimPayment,
  deletePayment,
  findCustomer,
  findPaymentByKey,
  finishPayment,
} from "./repository.js";

/** A purchase may buy at most this many times the plan's monthly credits. */
export const MAX_PURCHASE_MULTIPLE = 5;
/** How long an Idempotency-Key answers with the first answer. */
const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface CreditPurchaseResult {
  creditsPurchased: number;
  pricePerCreditCents: number;
  amountCents: number;
  permanentCredits: number;
  totalCreditsRemaining: number;
  message: string;
}

/**
 * The processor's idempotency key of a charge. With the client's Idempotency-Key it is derived from
 * that key (and the request), so a retry after a crash between the processor's charge and our
 * commit (which lost the payment row) asks the processor again under the same key and gets the
 * same payment back instead of charging twice; its success event grants the credits once either
 * way (claimGrant). Without one, each request is its own charge, keyed by its payment row.
 */
function processorKeyOf(
  accountId: number,
  clientKey: string | null,
  requestHash: string,
  paymentId: string,
): string {
  if (clientKey === null) return `credits-${paymentId}`;
  const derived = createHash("sha256").update(`${accountId}\n${clientKey}\n${requestHash}`).digest("hex");
  return `credits-key-${derived}`;
}

/** The answer a payment stored for repeats of its Idempotency-Key. */
type StoredAnswer =
  { status: 200; body: CreditPurchaseResult } | { status: 402; error: { code: string; message: string } };

/**
 * `POST /purchase-credits`: charges the saved payment method off-session at the plan's price per
 * credit and grants the credits as permanent credits once paid, all in one transaction that also
 * holds the payment's row: a concurrent request with the same Idempotency-Key waits for it and
 * answers the same; the processor's own idempotency key makes a retried charge charge once.
 */
export async function purchaseCredits(
  db: Db,
  processor: PaymentProcessor | undefined,
  input: { accountId: number; creditCount: number; idempotencyKey: string | undefined },
): Promise<CreditPurchaseResult> {
  const state = await findSubscriptionState(db, input.accountId);
  const plan = state && isPlanId(state.plan) ? state.plan : null;
  if (!state || !plan) throw errors.forbidden();
  if (state.subscriptionStatus === "trialing") {
    throw errors.badRequest(
      "Credits cannot be bought during the trial; activate the plan first (POST /subscription/change-plan).",
    );
  }
  const max = PLANS[plan].monthlyCredits * MAX_PURCHASE_MULTIPLE;
  if (input.creditCount > max) {
    const message = `must be at most ${max} (5 times the ${plan} plan's monthly credits)`;
    throw errors.validation(`Invalid request: body.creditCount: ${message}`, [
      { path: ["body", "creditCount"], message },
    ]);
  }
  const customer = await findCustomer(db, input.accountId);
  if (!customer?.paymentMethodId) {
    throw errors.badRequest("The account has no saved payment method; credits cannot be charged.");
  }
  if (!processor) throw billingErrors.paymentUnavailable();
  const price = PLANS[plan].creditPriceCents;
  const amountCents = Math.round(input.creditCount * price);
  const requestHash = createHash("sha256").update(`credits:${input.creditCount}`).digest("hex");
  const key = input.idempotencyKey ?? null;

  const answer = await db.transaction().execute(async (trx): Promise<StoredAnswer> => {
    let paymentId = await claimPayment(trx, {
      accountId: input.accountId,
      kind: "credits",
      idempotencyKey: key,
      requestHash,
      amountCents,
      credits: input.creditCount,
    });
    if (!paymentId && key) {
      const first = await findPaymentByKey(trx, {
        accountId: input.accountId,
        kind: "credits",
        idempotencyKey: key,
      });
      if (first && first.createdAt.getTime() > Date.now() - IDEMPOTENCY_WINDOW_MS) {
        if (first.requestHash !== requestHash) throw billingErrors.idempotencyKeyReused();
        if (first.answer) return first.answer as StoredAnswer;
      }
      if (first) await deletePayment(trx, first.id);
      paymentId = await claimPayment(trx, {
        accountId: input.accountId,
        kind: "credits",
        idempotencyKey: key,
        requestHash,
        amountCents,
        credits: input.creditCount,
      });
    }
    if (!paymentId) throw errors.internal();
    let paymentIntentId: string;
    try {
      ({ paymentIntentId } = await processor.charge({
        customerId: customer.customerId,
        paymentMethodId: customer.paymentMethodId!,
        amountCents,
        description: `${input.creditCount} credits`,
        metadata: {
          kind: "credits",
          account_id: String(input.accountId),
          credits: String(input.creditCount),
          payment_id: paymentId,
        },
        idempotencyKey: processorKeyOf(input.accountId, key, requestHash, paymentId),
      }));
    } catch (err) {
      if (!(err instanceof PaymentDeclined)) throw processorFailure(err, { failedCode: false });
      const declined: StoredAnswer = {
        status: 402,
        error: {
          code: "payment_declined",
          message: "The saved payment method was declined; no credits were added.",
        },
      };
      await finishPayment(trx, paymentId, {
        status: "declined",
        paymentIntentId: err.paymentIntentId,
        answer: declined,
      });
      return declined;
    }
    if (await claimGrant(trx, { paymentIntentId, accountId: input.accountId, credits: input.creditCount })) {
      await grantCredits(trx, {
        accountId: input.accountId,
        bucket: "permanent",
        tenths: toTenths(input.creditCount),
        reason: "credit_purchase",
        reference: paymentIntentId,
      });
    }
    const balance = await readBalance(trx, input.accountId, state.periodStart);
    const body: CreditPurchaseResult = {
      creditsPurchased: input.creditCount,
      pricePerCreditCents: price,
      amountCents,
      permanentCredits: fromTenths(balance.permanentTenths),
      totalCreditsRemaining: fromTenths(creditTenths(balance)),
      message: `${input.creditCount} credits were added to the permanent balance; ${(amountCents / 100).toFixed(2)} USD was charged.`,
    };
    const paid: StoredAnswer = { status: 200, body };
    await finishPayment(trx, paymentId, { status: "succeeded", paymentIntentId, answer: paid });
    return paid;
  });
  if (answer.status === 402) throw new ApiError(402, answer.error.code, answer.error.message);
  return answer.body;
}
