import { chargeDelivery, type DeliveryCharged } from "../../credits/charge.js";
import type { Trx } from "../../db/database.js";
import type { ExportHistoryEntry } from "../../export-history/entry.js";
import { recordExportFiles } from "../../export-history/service.js";
import type { JobAnswerOf, JobContext } from "../../jobs/index.js";
import { recordDeliveredLeads } from "../../leads/versions.js";
import { emitExportEvents } from "./events.js";
import { assertExportFits } from "../../export-files/split.js";
import { columnsOf } from "../../export-files/columns.js";
import type { RowBatch } from "../../export-files/writer.js";
import {
  deleteExportFiles,
  exportFolder,
  writeExportFiles,
  writeStoredFiles,
  type StoredExport,
  type WrittenExport,
} from "../../export-files/store.js";
import type { LinkSigner } from "../../export-history/service.js";
import { exportLeadsOf, type ExportJobInput } from "./input.js";
import { toLeadExportAnswer } from "./presenter.js";
import {
  addToReservoir,
  deleteExpiredReservoir,
  removeFromReservoir,
  streamExportBatches,
} from "./repository.js";
import type { Selection } from "./selection.js";
import { selectExport } from "./service.js";

/** How long a lead stays in the reservoir after an export left it out. */
export const RESERVOIR_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;
/** Rows between two progress updates while writing. */
const PROGRESS_EVERY = 5_000;

/**
 * The export job's work: select the leads, then write the files (streamed) while ONE transaction
 * records the leads in the lead export history (method `api`, or `dashboard` from a session; the
 * version delivered) and updates
 * the lead reservoir; once the files are written it locks the account's credits, charges the
 * leads that were new to the account (chargeDelivery, src/credits/charge.ts), records the export
 * history entries and commits the job's answer. A second run after a crash finds the job
 * answered (commit refuses) and charges nothing; files of a run that did not commit are removed.
 */
export async function runExport(input: ExportJobInput, job: JobContext): Promise<ExportAnswer> {
  await job.progress({ phase: "selecting", done: 0, total: 0, label: "leads" });
  const selection = await selectExport(
    job.db,
    { accountId: job.accountId, leads: exportLeadsOf(input), caps: input.caps, format: input.format },
    job.signal,
  );
  // Checked again here: the matches may have changed since the request was checked.
  assertExportFits(input.format, selection.ids.length);

  const total = selection.ids.length;
  await job.progress({ phase: "writing", done: 0, total, label: "leads" });
  await removeEarlierAttempts(job);
  const ids = selection.ids;
  const stopWriting = new AbortController();
  const signal = AbortSignal.any([job.signal, stopWriting.signal]);
  const rows = streamExportBatches(job.db, ids, columnsOf(input.format), input.format.fileType);
  const toWrite = {
    accountId: job.accountId,
    rows: withProgress(rows, job, total, signal),
    totalCount: total,
    format: input.format,
    exportId: attemptExportId(job.jobId, job.attempt),
  };
  // Only the file answer needs a ZIP of a split export; the JSON answers name each file.
  const writing: Promise<StoredExport & Partial<WrittenExport>> =
    input.answer === "file" ? writeExportFiles(job.storage, toWrite) : writeStoredFiles(job.storage, toWrite);
  // Awaited in the transaction; a failure before that is handled below.
  writing.catch(() => undefined);

  let written: (StoredExport & Partial<WrittenExport>) | undefined;
  let answer: ExportAnswer | undefined;
  try {
    const signer = linkSigner(job, input.publicBaseUrl);
    await job.db.transaction().execute(async (trx) => {
      const charged = await chargeDelivery(trx, {
        accountId: job.accountId,
        reason: "lead_export",
        reference: job.jobId,
        // A job waits for a concurrent delivery of the same leads to end (see EntryWait).
        entryWait: "unbounded",
        deliver: async (trx) => {
          const newLeads = await deliverExport(trx, job, selection, input.method);
          // The files are awaited before the credit lock: no charge of the account waits for them.
          written = await writing;
          await job.progress({ phase: "charging", done: total, total, label: "leads" });
          return { lead: newLeads };
        },
      });
      const files = written!; // set by the delivery step
      const entries = await recordExportFiles(trx, {
        accountId: job.accountId,
        written: files,
        formatName: input.format.name,
        method: input.method,
        filters: input.filters,
      });
      await emitExportEvents(trx, {
        accountId: job.accountId,
        exportId: files.exportId,
        entries,
        fileType: input.format.fileType,
        leadIds: selection.ids,
        creditsUsed: charged.tenths / 10,
        method: input.method,
      });
      answer = exportAnswer(input, selection, files, entries, charged, signer);
      await job.commit(trx, answer);
    });
  } catch (err) {
    stopWriting.abort();
    // writeExportFiles removes its own files when it fails; these are the files it finished.
    const done = written ?? (await writing.catch(() => undefined));
    if (done) await deleteExportFiles(job.storage, storageKeysOf(done));
    throw err;
  }
  return answer!;
}

/** The storage folder name of one attempt of an export job. */
function attemptExportId(jobId: string, attempt: number): string {
  return `job-${jobId}-${attempt}`;
}

/**
 * Removes the files of earlier attempts of this job: an attempt killed with its worker never
 * committed (this attempt runs because the job has no answer, and commits are fenced by
 * attempt), so nothing refers to them.
 */
async function removeEarlierAttempts(job: JobContext): Promise<void> {
  for (let attempt = 1; attempt < job.attempt; attempt += 1) {
    await job.storage.deletePrefix(exportFolder(job.accountId, attemptExportId(job.jobId, attempt)));
  }
}

/** Every stored file of a written export (the answer ZIP included). */
function storageKeysOf(written: StoredExport & Partial<WrittenExport>): string[] {
  const keys = written.files.map((f) => f.storageKey);
  if (written.answer?.temporary) keys.push(written.answer.storageKey);
  return keys;
}

/**
 * Records the selected leads in the account's lead export history and updates the reservoir
 * (the delivery step of chargeDelivery: no credit lock yet). Waits for a concurrent delivery of
 * the same leads to the same account to finish. Returns how many leads were new to the account.
 */
async function deliverExport(
  trx: Trx,
  job: JobContext,
  selection: Selection,
  method: ExportJobInput["method"],
): Promise<number> {
  const ids = selection.ids;
  const exportedAt = new Date();
  const newLeads = await recordDeliveredLeads(trx, {
    accountId: job.accountId,
    method,
    exportedAt,
    leadIds: ids,
    // The selection read the account's history: when it found none of the leads there, they are
    // inserted without the conflict check (a delivery since is still found).
    newToAccount: selection.newLeads === ids.length,
  });
  await deleteExpiredReservoir(trx, job.accountId);
  await removeFromReservoir(trx, job.accountId, ids);
  await addToReservoir(
    trx,
    job.accountId,
    selection.overflow,
    new Date(exportedAt.getTime() + RESERVOIR_LIFETIME_MS),
  );
  return newLeads;
}

/** An answer of `POST /leads/export`. */
type ExportAnswer = JobAnswerOf<"exportLeads">;

/**
 * The job's answer in the form the request asked: the file (a ZIP when split), or the JSON answer
 * with each file's contents (`json`) or links (`links`).
 */
function exportAnswer(
  input: ExportJobInput,
  selection: Selection,
  written: StoredExport & Partial<WrittenExport>,
  entries: ExportHistoryEntry[],
  charged: DeliveryCharged,
  signer: LinkSigner,
): ExportAnswer {
  const headers = selection.capped ? { "X-Credits-Capped": "true" as const } : {};
  if (input.answer === "file") {
    const { storageKey, contentType, fileName, temporary } = written.answer!;
    return { status: 200, headers, file: { storageKey, contentType, fileName, shared: !temporary } };
  }
  const body = toLeadExportAnswer(
    signer,
    entries,
    {
      leadCount: selection.ids.length,
      creditsUsedTenths: charged.tenths,
      creditsRemainingTenths: charged.remainingTenths,
      caps: input.caps,
      overflowCount: selection.overflow.length,
    },
    input.answer === "json",
  );
  return { status: 200, headers, body: { data: body } };
}

/**
 * What signs the JSON answer's links: the deployment's signing secret (given to the worker,
 * src/main.ts), and the base URL of the API that took the request.
 */
function linkSigner(job: JobContext, publicBaseUrl: string): LinkSigner {
  return { signingSecret: job.signingSecret, publicBaseUrl };
}

/** The batches as they come, reporting progress and stopping when the job is aborted. */
async function* withProgress(
  batches: AsyncGenerator<RowBatch>,
  job: JobContext,
  total: number,
  signal: AbortSignal,
): AsyncGenerator<RowBatch> {
  let done = 0;
  let reported = 0;
  for await (const rows of batches) {
    yield rows;
    done += rows.length;
    signal.throwIfAborted();
    if (done - reported >= PROGRESS_EVERY) {
      reported = done;
      await job.progress({ phase: "writing", done, total, label: "leads" });
    }
  }
}
