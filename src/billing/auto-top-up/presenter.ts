import type { JsonBody } from "../../http/contract.js";
import type { AutoTopUpView } from "./settings.js";

type AutoTopUpBody = JsonBody<"getAutoTopUp", 200>["data"];

/** The API shape of the auto top-up (GET and PATCH answer the same). */
export function toAutoTopUpBody(v: AutoTopUpView): AutoTopUpBody {
  return {
    enabled: v.enabled,
    triggerType: v.config?.trigger.type ?? null,
    triggerAmount: v.config?.trigger.amount ?? null,
    purchaseType: v.config?.purchase.type ?? null,
    purchaseAmount: v.config?.purchase.amount ?? null,
    capType: v.config?.cap?.type ?? null,
    capAmount: v.config?.cap?.amount ?? null,
    monthlyUsage: {
      purchases: v.usage.purchases,
      credits: v.usage.credits,
      amountCents: v.usage.amountCents,
      periodStart: v.periodStart?.toISOString() ?? null,
      periodEnd: v.periodEnd?.toISOString() ?? null,
    },
    pricePerCredit: v.pricePerCredit,
    hasPaymentMethod: v.hasPaymentMethod,
    consecutiveFailures: v.consecutiveFailures,
    disabledReason: v.disabledReason,
  };
}
