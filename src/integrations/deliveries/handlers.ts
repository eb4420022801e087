import { ApiError, errors } from "../../http/errors.js";
import type { Handlers } from "../../http/contract.js";
import { integrationOf, pushLead, retryDelivery, testIntegration, type ManualSendDeps } from "./manual.js";
import { toDeliveryBody, toSendResult } from "./presenter.js";
import { listDeliveries } from "./repository.js";

/**
 * A charge that waited 2 s for the account's credit lock: push-lead answers 503
 * `service_unavailable` (nothing written; the document's 429 `charge_in_progress` belongs to
 * searches and exports).
 */
function chargeBusyAsUnavailable(err: unknown): never {
  if (err instanceof ApiError && err.code === "charge_in_progress") {
    throw errors.serviceUnavailable(
      "Another request of this account is charging credits; nothing was charged or sent. Retry shortly.",
      30,
    );
  }
  throw err;
}

/** The delivery log, retry, test and push of an integration. */
export function deliveryHandlers(
  deps: ManualSendDeps,
): Handlers<
  "listIntegrationDeliveries" | "retryIntegrationDelivery" | "testIntegration" | "pushLeadToIntegration"
> {
  return {
    async listIntegrationDeliveries({ caller, params }) {
      const integration = await integrationOf(deps.db, caller.accountId, params.id);
      const deliveries = await listDeliveries(deps.db, integration.id);
      return { status: 200, body: { data: deliveries.map(toDeliveryBody) } };
    },
    async retryIntegrationDelivery({ caller, params }) {
      const retried = await retryDelivery(deps, caller.accountId, params.id, params.deliveryId);
      const data =
        retried.kind === "sent"
          ? toSendResult(retried.outcome)
          : {
              status: "queued" as const,
              queuedBatches: retried.queuedBatches,
              queuedLeads: retried.queuedLeads,
            };
      return { status: 200, body: { data } };
    },
    async testIntegration({ caller, params, body }) {
      const outcome = await testIntegration(
        deps,
        caller.accountId,
        params.id,
        body?.eventType ?? "lead.created",
      );
      return { status: 200, body: { data: toSendResult(outcome) } };
    },
    async pushLeadToIntegration({ caller, params, body }) {
      // Both sent: `leadId` wins (docs/integrations.md).
      const input = "leadId" in body ? { leadId: body.leadId } : { lead: body.lead };
      const pushed = await pushLead(deps, caller.accountId, params.id, input).catch(chargeBusyAsUnavailable);
      const { outcome } = pushed;
      return {
        status: 200,
        body: {
          data: {
            status: outcome.ok ? "success" : "failed",
            tracked: pushed.tracked,
            creditsUsed: pushed.creditsUsed,
            // A CRM answers what it wrote (`crm_deals`: none); a webhook its status and latency.
            result:
              outcome.crmResult !== undefined
                ? outcome.crmResult
                : { statusCode: outcome.statusCode, latencyMs: outcome.latencyMs },
            error: outcome.error,
          },
        },
      };
    },
  };
}
