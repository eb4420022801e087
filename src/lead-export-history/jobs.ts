import { columnsOf } from "../export-files/columns.js";
import { parseDeliveryChannel, type DeliveryChannel } from "../leads/delivery-channel.js";
import type { FileFormat } from "../export-files/format.js";
import { deleteExportFiles, writeExportFiles, type WrittenExport } from "../export-files/store.js";
import { recordExportFiles } from "../export-history/service.js";
import {
  defineJobKind,
  JOB_LIFETIMES,
  type JobAnswer,
  type JobAnswerOf,
  type JobContext,
} from "../jobs/index.js";
import type { Trx } from "../db/database.js";
import { streamEntryRows } from "./file-rows.js";
import { refreshResultBody } from "./presenter.js";
import { clearChangedFields } from "./refresh-repository.js";
import { refreshEntries } from "./refresh.js";
import { exportableEntries, MAX_ENTRIES } from "./selection.js";

/** Running jobs of each of the three kinds per account (openapi.yaml: 2 of each request). */
export const HISTORY_JOB_CAPACITY = 2;
const TIMEOUT_MS = 20 * 60_000;

/** A refresh: the tracking ids resolved when the request arrived. */
export interface RefreshJobInput {
  trackingIds: number[];
}

/** A re-export or refresh-and-export: the tracking ids and the file format, resolved at arrival. */
export interface HistoryExportJobInput {
  trackingIds: number[];
  format: FileFormat;
  /** The channel the file records (src/leads/delivery-channel.ts). */
  method: DeliveryChannel;
}

function parseIds(raw: unknown): number[] {
  const ids = (raw as { trackingIds?: unknown } | null)?.trackingIds;
  if (!Array.isArray(ids) || ids.length > MAX_ENTRIES || !ids.every((id) => Number.isSafeInteger(id))) {
    throw new Error("invalid lead export history job input: trackingIds");
  }
  return ids as number[];
}

function parseExportInput(raw: unknown): HistoryExportJobInput {
  const format = (raw as { format?: unknown } | null)?.format;
  if (typeof format !== "object" || format === null || !Array.isArray((format as FileFormat).fieldMappings)) {
    throw new Error("invalid lead export history job input: format");
  }
  const method = parseDeliveryChannel((raw as { method?: unknown }).method);
  return { trackingIds: parseIds(raw), format: format as FileFormat, method };
}

/** `POST /lead-export-history/refresh`: refreshes and answers the results (nothing charged). */
export const refreshHistoryJob = defineJobKind<RefreshJobInput, "refreshLeadExportHistory">({
  kind: "lead_history_refresh",
  operation: "refreshLeadExportHistory",
  capacity: HISTORY_JOB_CAPACITY,
  timeoutMs: TIMEOUT_MS,
  ...JOB_LIFETIMES.standard,
  parseInput: (raw) => ({ trackingIds: parseIds(raw) }),
  async run(input, job) {
    await job.progress({ phase: "refreshing", done: 0, total: input.trackingIds.length, label: "entries" });
    let answer: JobAnswerOf<"refreshLeadExportHistory"> | undefined;
    await job.db.transaction().execute(async (trx) => {
      const outcome = await refreshEntries(trx, job.accountId, input.trackingIds);
      answer = { status: 200, body: { data: refreshResultBody(outcome) } };
      await job.commit(trx, answer);
    });
    return answer!;
  },
});

/** `POST /lead-export-history/re-export`: a file of the stored snapshots; nothing refreshed or sent. */
export const reExportHistoryJob = defineJobKind<HistoryExportJobInput, "reExportLeadExportHistory">({
  kind: "lead_history_re_export",
  operation: "reExportLeadExportHistory",
  capacity: HISTORY_JOB_CAPACITY,
  timeoutMs: TIMEOUT_MS,
  ...JOB_LIFETIMES.standard,
  parseInput: parseExportInput,
  run: (input, job) =>
    exportEntries(input, job, { refresh: false }) as Promise<JobAnswerOf<"reExportLeadExportHistory">>,
});

/** `POST /lead-export-history/refresh-and-export`: refresh, then a file of the fresh data. */
export const refreshAndExportHistoryJob = defineJobKind<
  HistoryExportJobInput,
  "refreshAndExportLeadExportHistory"
>({
  kind: "lead_history_refresh_and_export",
  operation: "refreshAndExportLeadExportHistory",
  capacity: HISTORY_JOB_CAPACITY,
  timeoutMs: TIMEOUT_MS,
  ...JOB_LIFETIMES.standard,
  parseInput: parseExportInput,
  run: (input, job) =>
    exportEntries(input, job, { refresh: true }) as Promise<JobAnswerOf<"refreshAndExportLeadExportHistory">>,
});

/**
 * Writes the file of the entries in one transaction that also records it in the export history
 * and commits the job's answer (a crash rolls all of it back; a second run starts over). With
 * `refresh`, the entries are checked again (404 / 400 leave them unchanged), refreshed, and their
 * changed fields cleared first, in the same transaction, so the file holds exactly the versions
 * the entries now name. No credit moves.
 */
async function exportEntries(
  input: HistoryExportJobInput,
  job: JobContext,
  options: { refresh: boolean },
): Promise<JobAnswer> {
  await job.progress({ phase: "writing", done: 0, total: input.trackingIds.length, label: "entries" });
  let written: WrittenExport | undefined;
  let answer: JobAnswer | undefined;
  try {
    await job.db.transaction().execute(async (trx) => {
      const ids = await prepare(trx, job, input, options);
      const rows = streamEntryRows(trx, job.accountId, ids, columnsOf(input.format), input.format.fileType);
      written = await writeExportFiles(job.storage, {
        accountId: job.accountId,
        rows,
        totalCount: ids.length,
        format: input.format,
        exportId: `history-${job.jobId}-${job.attempt}`,
        ...(options.refresh ? { namePrefix: "refreshed-export" } : {}),
      });
      await recordExportFiles(trx, {
        accountId: job.accountId,
        written,
        formatName: input.format.name,
        method: input.method,
      });
      const { storageKey, contentType, fileName, temporary } = written.answer;
      const built: JobAnswer = {
        status: 200,
        file: { storageKey, contentType, fileName, shared: !temporary },
      };
      answer = built;
      await job.commit(trx, built);
    });
  } catch (err) {
    if (written) {
      const keys = written.files.map((f) => f.storageKey);
      if (written.answer.temporary) keys.push(written.answer.storageKey);
      await deleteExportFiles(job.storage, keys);
    }
    throw err;
  }
  return answer!;
}

/** The entries of the file, checked (404 / 400) and, for refresh-and-export, refreshed. */
async function prepare(
  trx: Trx,
  job: JobContext,
  input: HistoryExportJobInput,
  options: { refresh: boolean },
): Promise<number[]> {
  if (!options.refresh) return exportableEntries(trx, job.accountId, input.trackingIds);
  // Checked before anything changes: a 400 or 404 rolls back with every entry as it was.
  await exportableEntries(trx, job.accountId, input.trackingIds);
  await refreshEntries(trx, job.accountId, input.trackingIds, { clearChangedFields: true });
  const ids = await exportableEntries(trx, job.accountId, input.trackingIds);
  await clearChangedFields(trx, job.accountId, ids);
  return ids;
}
