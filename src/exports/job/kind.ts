import { defineJobKind, JOB_LIFETIMES } from "../../jobs/index.js";
import { parseExportJobInput, type ExportJobInput } from "./input.js";
import { runExport } from "./run.js";

/** Running exports per account (openapi.yaml, exportLeads); one more gives 429 `job_capacity_busy`. */
export const EXPORT_JOB_CAPACITY = 3;

/**
 * The `api_leads_export` job of `POST /leads/export`. Imported by src/worker/worker.ts too, so
 * worker processes find it by name. Its 402 `insufficient_credits` does not use the
 * Idempotency-Key up (docs/jobs.md, Idempotency-Key).
 */
export const leadsExportJob = defineJobKind<ExportJobInput, "exportLeads">({
  kind: "api_leads_export",
  operation: "exportLeads",
  capacity: EXPORT_JOB_CAPACITY,
  timeoutMs: 20 * 60_000,
  ...JOB_LIFETIMES.standard,
  keyKeepingStatuses: [402],
  parseInput: (raw) => parseExportJobInput(raw),
  run: runExport,
});
