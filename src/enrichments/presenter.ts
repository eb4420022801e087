import type { components } from "../../generated/api.js";
import { fromTenths } from "../credits/ledger.js";
import type { EnrichmentRun } from "./run.js";
import { resultReady } from "./service.js";

type ApiRun = components["schemas"]["EnrichmentRun"];
type ApiAccepted = components["schemas"]["EnrichmentAccepted"];

/** The answer of `POST /enrichments`. */
export function toAcceptedBody(run: EnrichmentRun): ApiAccepted {
  return {
    id: run.id,
    status: "queued",
    urlCount: run.urlCount,
    duplicatesRemoved: run.duplicatesRemoved,
    skippedInvalid: run.skippedInvalid,
  };
}

/** A run as the API shows it (credits in credits, not tenths). */
export function toRunBody(run: EnrichmentRun): ApiRun {
  const ready = resultReady(run);
  return {
    id: run.id,
    status: run.status,
    contactTypes: run.contactTypes,
    databaseMatchPercent: run.databaseMatchPercent,
    maxCredits: run.maxCreditsTenths === null ? null : fromTenths(run.maxCreditsTenths),
    emailResults: run.emailResults,
    urls: {
      submitted: run.submittedCount,
      duplicatesRemoved: run.duplicatesRemoved,
      skippedInvalid: run.skippedInvalid,
      total: run.urlCount,
      processed: run.processed,
    },
    database: {
      matched:
        run.database.charged +
        run.database.free +
        run.database.skippedOverBudget +
        run.database.noRequestedContact,
      delivered: run.database.charged + run.database.free,
      charged: run.database.charged,
      free: run.database.free,
      skippedOverBudget: run.database.skippedOverBudget,
      noRequestedContact: run.database.noRequestedContact,
    },
    live: { ...run.live },
    credits: {
      databaseCharged: fromTenths(run.dbChargedTenths),
      liveCharged: fromTenths(run.liveChargedTenths),
      total: fromTenths(run.dbChargedTenths + run.liveChargedTenths),
      final: run.creditsFinal,
      limit: fromTenths(run.limitTenths),
    },
    result: { rowCount: ready ? run.resultRowCount : 0, ready },
    createdAt: run.createdAt.toISOString(),
    startedAt: run.startedAt?.toISOString() ?? null,
    completedAt: run.completedAt?.toISOString() ?? null,
    error: run.error,
  };
}
