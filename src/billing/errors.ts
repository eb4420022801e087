import { ApiError } from "../http/errors.js";
import { BadSignature, PaymentDeclined, PaymentFailed, ProcessorUnavailable } from "./processor.js";

/** The billing answers of the contract (spec/common/errors.tsp, spec/billing/models.tsp). */
export const billingErrors = {
  paymentUnavailable: (message = "Payment processing is not available; nothing was charged or changed.") =>
    new ApiError(503, "payment_unavailable", message),
  paymentDeclined: (message = "The saved payment method was declined; nothing was charged or changed.") =>
    new ApiError(402, "payment_declined", message),
  paymentFailed: (message = "The charge could not be completed; nothing was charged or changed.") =>
    new ApiError(402, "payment_failed", message),
  invalidEmail: () => new ApiError(400, "invalid_email", "`email` is not a valid e-mail address."),
  invalidPlan: (field: string) =>
    new ApiError(
      400,
      "invalid_plan",
      `\`${field}\` must be one of starter, growth, scale, platinum, enterprise.`,
    ),
  planRetired: (plan: string) => new ApiError(410, "plan_retired", `The ${plan} plan is no longer sold.`),
  disposableEmail: () =>
    new ApiError(403, "disposable_email", "Disposable e-mail addresses cannot buy a subscription."),
  alreadySubscribed: () =>
    new ApiError(
      409,
      "already_subscribed",
      "This e-mail address already has a subscription (trials included); use POST /subscription/change-plan instead.",
    ),
  planChangeInProgress: () =>
    new ApiError(
      409,
      "plan_change_in_progress",
      "Another plan change of this account is being processed; nothing was changed.",
    ),
  idempotencyKeyReused: () =>
    new ApiError(
      409,
      "idempotency_key_reused",
      "This Idempotency-Key was already used with a different request on this endpoint.",
    ),
};

/**
 * The answer of a processor failure in a request: a decline is 402 `payment_declined`, another
 * failure 402 `payment_failed` (where the operation declares it, else `payment_declined`), an
 * unreachable processor 503 `payment_unavailable`. Anything else is passed on.
 */
export function processorFailure(err: unknown, { failedCode }: { failedCode: boolean }): unknown {
  if (err instanceof PaymentDeclined) return billingErrors.paymentDeclined();
  if (err instanceof PaymentFailed) {
    return failedCode
      ? billingErrors.paymentFailed()
      : billingErrors.paymentDeclined("The charge could not be completed; nothing was charged.");
  }
  if (err instanceof ProcessorUnavailable) return billingErrors.paymentUnavailable();
  if (err instanceof BadSignature)
    return new ApiError(400, "bad_request", `The event was refused: ${err.message}.`);
  return err;
}
