import type { components } from "../../../generated/api.js";
import { firstChars } from "../../outbound/index.js";
import type { Delivery } from "./delivery.js";
import type { SendOutcome } from "./send.js";

type ApiDelivery = components["schemas"]["IntegrationDelivery"];
type ApiSendResult = components["schemas"]["IntegrationSendResult"];

/** A delivery as the delivery log shows it (`batchSummary` on batched `export.leads` rows only). */
export function toDeliveryBody(delivery: Delivery): ApiDelivery {
  const body: ApiDelivery = {
    id: delivery.id,
    eventType: delivery.eventType,
    targetUrl: delivery.targetUrl,
    status: delivery.status,
    statusCode: delivery.statusCode,
    attemptCount: delivery.attemptCount,
    latencyMs: delivery.latencyMs,
    errorMessage: delivery.errorMessage,
    responseBody: delivery.responseBody === null ? null : firstChars(delivery.responseBody, 1000),
    createdAt: delivery.createdAt.toISOString(),
    completedAt: delivery.completedAt?.toISOString() ?? null,
  };
  const s = delivery.batchSummary;
  if (s) {
    body.batchSummary = {
      exportId: s.exportId,
      batchCount: s.batchCount,
      batchesSent: s.batchesSent,
      batchesFailed: s.batchesFailed,
      leadCount: s.leadCount,
      leadsSent: s.leadsSent,
    };
  }
  return body;
}

/** The answer of a test or a single-event retry. */
export function toSendResult(outcome: SendOutcome): ApiSendResult {
  return {
    status: outcome.ok ? "success" : "failed",
    statusCode: outcome.statusCode,
    latencyMs: outcome.latencyMs,
    error: outcome.error,
  };
}
