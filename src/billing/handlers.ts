import type { Config } from "../config.js";
import type { Db } from "../db/database.js";
import type { Handlers } from "../http/contract.js";
import { ApiError } from "../http/errors.js";
import { purchaseCredits } from "./credit-purchase.js";
import { billingErrors, processorFailure } from "./errors.js";
import { getOverage, updateOverage } from "./overage.js";
import { processorFromConfig, type PaymentProcessor } from "./processor.js";
import { toCancellationBody, toOverageBody, toPlanChangeBody, toPurchaseBody } from "./presenter.js";
import { claimKey, startPurchase } from "./purchase.js";
import { cancelSubscription, changePlan } from "./subscription.js";
import { handleProcessorEvent } from "./webhook.js";

type BillingOperation =
  | "purchase"
  | "claimKey"
  | "receivePaymentWebhook"
  | "purchaseCredits"
  | "getOverageBudget"
  | "updateOverageBudget"
  | "cancelSubscription"
  | "changePlan";

/**
 * Purchase, the payment processor's webhook, credits, overage budget and subscription. The
 * processor is built from the configuration; without `STRIPE_SECRET_KEY` it is absent and the
 * money endpoints answer 503 `payment_unavailable`. `processor` replaces it (tests).
 */
export function billingHandlers(ctx: {
  db: Db;
  config: Config;
  processor?: PaymentProcessor;
}): Handlers<BillingOperation> {
  const { db } = ctx;
  const processor = ctx.processor ?? processorFromConfig(ctx.config);
  return {
    async purchase({ body }) {
      const started = await startPurchase(db, processor, {
        email: body.email,
        plan: body.plan,
        trial: body.trial !== false,
        publicBaseUrl: ctx.config.publicBaseUrl,
      });
      return { status: 201, body: { data: toPurchaseBody(started) } };
    },
    claimKey() {
      return Promise.resolve(claimKey());
    },
    async receivePaymentWebhook({ headers, http }) {
      if (!processor)
        throw billingErrors.paymentUnavailable("Payment processing is not configured on this deployment.");
      if (!http.rawBody) throw new ApiError(400, "bad_request", "The event body is missing.");
      let event;
      try {
        event = processor.verifyEvent(http.rawBody, headers["Stripe-Signature"]);
      } catch (err) {
        throw processorFailure(err, { failedCode: false });
      }
      await handleProcessorEvent(db, processor, event);
      return { status: 200, body: { received: true } };
    },
    async purchaseCredits({ caller, body, headers }) {
      const result = await purchaseCredits(db, processor, {
        accountId: caller.accountId,
        creditCount: body.creditCount,
        idempotencyKey: headers["Idempotency-Key"],
      });
      return { status: 200, body: { data: result } };
    },
    async getOverageBudget({ caller }) {
      return { status: 200, body: { data: toOverageBody(await getOverage(db, caller.accountId)) } };
    },
    async updateOverageBudget({ caller, body }) {
      return { status: 200, body: { data: toOverageBody(await updateOverage(db, caller.accountId, body)) } };
    },
    async cancelSubscription({ caller }) {
      return {
        status: 200,
        body: { data: toCancellationBody(await cancelSubscription(db, processor, caller.accountId)) },
      };
    },
    async changePlan({ caller, body }) {
      const result = await changePlan(db, processor, {
        accountId: caller.accountId,
        targetPlan: body.targetPlan,
        mode: body.mode,
      });
      return { status: 200, body: { data: toPlanChangeBody(result) } };
    },
  };
}
