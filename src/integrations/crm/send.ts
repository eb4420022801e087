import { performance } from "node:perf_hooks";
import { firstChars } from "../../outbound/index.js";
import type { SendOutcome } from "../deliveries/send.js";
import { isCrmProvider } from "../providers.js";
import type { DealSettings } from "./adapter.js";
import { openCrm, withSession } from "./access.js";
import { CrmApiError } from "./errors.js";
import { crmLeadOf } from "./lead.js";
import { cachedFieldLists } from "./repository.js";
import type { CrmRuntime } from "./runtime.js";

/** The delivery log's `targetUrl` of a CRM: `<crm>://<the records it writes>`. */
export function crmTarget(provider: string): string {
  if (provider === "crm_contacts") return "crm_contacts://contacts";
  if (provider === "crm_leads") return "crm_leads://leads";
  return "crm_deals://persons";
}

/** One write to a CRM: the attempt's outcome (as a webhook's) and the document's push `result`. */
export interface CrmSendResult {
  outcome: SendOutcome;
  result: Record<string, string> | null;
}

/**
 * Writes one event's lead to a CRM integration through its adapter (one attempt). Never throws
 * for the CRM's failures: they are the outcome (`statusCode` the CRM's status, null when nothing
 * answered; a 429 carries the CRM's wait in `retryAfterSeconds`).
 */
export async function sendToCrm(
  runtime: CrmRuntime | undefined,
  integration: { id: number; provider: string },
  data: unknown,
): Promise<CrmSendResult> {
  const started = performance.now();
  const failed = (
    statusCode: number | null,
    error: string,
    responseBody: string | null,
    retryAfterSeconds: number | null,
  ) => ({
    outcome: {
      ok: false,
      statusCode,
      latencyMs: Math.round(performance.now() - started),
      error: firstChars(error, 500),
      responseBody,
      retryAfterSeconds,
    },
    result: null,
  });
  const open =
    runtime && isCrmProvider(integration.provider)
      ? await openCrm(runtime, integration.id, integration.provider)
      : undefined;
  if (!runtime || !open) return failed(null, "The CRM is not configured for this deployment.", null, null);
  try {
    const cached = await cachedFieldLists(runtime.db, integration.id);
    const lists = Object.fromEntries([...cached].map(([name, list]) => [name, list.fields]));
    const written = await withSession(runtime, open, (session) =>
      open.adapter.write(
        session,
        crmLeadOf(data),
        open.connection.fieldMapping,
        open.connection.dealSettings as DealSettings | null,
        lists,
      ),
    );
    return {
      outcome: {
        ok: true,
        statusCode: 200,
        latencyMs: Math.round(performance.now() - started),
        error: null,
        responseBody: JSON.stringify(written.result ?? {}),
        retryAfterSeconds: null,
      },
      result: written.result,
    };
  } catch (err) {
    if (err instanceof CrmApiError) {
      const status = err.statusCode === null ? "" : `HTTP ${err.statusCode}: `;
      return failed(err.statusCode, `${status}${err.message}`, err.responseBody, err.retryAfterSeconds);
    }
    throw err;
  }
}
