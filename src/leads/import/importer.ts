import type { Db } from "../../db/database.js";
import { announceImportedLeads } from "./announce.js";
import { BatchWriter } from "./batch-writer.js";
import { sendQueuedLiveUpdates } from "./live-updates.js";
import { readImportFile, type SourceItem } from "./readers.js";
import { validateLeadRecord, type RecordForm } from "./record.js";

/** What an import did: new leads, existing leads updated (by external id), rows refused. */
export interface LeadImportResult {
  imported: number;
  updated: number;
  rejected: number;
  /** The first `maxErrors` refused rows, by line (every refused row is counted in `rejected`). */
  errors: { line: number; message: string }[];
}

export interface LeadImportOptions {
  /** Rows per INSERT statement (default 1,000). */
  batchSize?: number;
  /** Batches written at the same time, each on its own connection (default 3). */
  concurrency?: number;
  /** How many errors the result lists (default 100). */
  maxErrors?: number;
}

export const IMPORT_DEFAULTS = { batchSize: 1_000, concurrency: 3, maxErrors: 100 } as const;

function bounded(
  value: number | undefined,
  fallback: number,
  min: number,
  max: number,
  name: string,
): number {
  const n = value ?? fallback;
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`${name} must be an integer from ${min} to ${max}`);
  return n;
}

/**
 * Validates and writes the items of a source in bounded memory: at most `concurrency + 1` batches
 * are held at once, and reading waits while every writer is busy. Rows with an external id
 * upsert; a bad row is counted and listed (up to `maxErrors`) with its line and skipped. Once
 * the batches are committed, every process is told (`announce.ts`).
 */
async function runImport(
  db: Db,
  items: AsyncIterable<SourceItem> | Iterable<SourceItem>,
  options: LeadImportOptions,
): Promise<LeadImportResult> {
  const batchSize = bounded(options.batchSize, IMPORT_DEFAULTS.batchSize, 1, 10_000, "batchSize");
  const concurrency = bounded(options.concurrency, IMPORT_DEFAULTS.concurrency, 1, 16, "concurrency");
  const maxErrors = bounded(options.maxErrors, IMPORT_DEFAULTS.maxErrors, 0, 100_000, "maxErrors");
  const writer = new BatchWriter(db, batchSize, concurrency);
  const errors: LeadImportResult["errors"] = [];
  let rejected = 0;
  const reject = (line: number, message: string) => {
    rejected += 1;
    if (errors.length < maxErrors) errors.push({ line, message });
  };
  try {
    for await (const item of items) {
      if (item.value === undefined && "error" in item) {
        reject(item.line, item.error);
        continue;
      }
      const checked = validateLeadRecord(item.value, item.form);
      if (checked.ok) await writer.add(checked.row);
      else reject(item.line, checked.problems.join("; "));
    }
    await writer.close();
    // After every batch committed: the changed leads each batch queued are sent in bulk, one
    // lookup of who holds them and one outbox row per account (live-updates.ts).
    if (writer.changed > 0) await sendQueuedLiveUpdates(db);
  } catch (err) {
    await writer.settle();
    // A stopped import still tells the accounts about the leads it changed before it stopped
    // (and if this fails too, the worker's sweep sends what stays queued).
    if (writer.changed > 0) await sendQueuedLiveUpdates(db).catch(() => 0);
    throw err;
  } finally {
    // Every batch is settled here, the written ones committed: one announcement for the whole
    // import, also when it stopped half-way. A failed NOTIFY loses nothing but freshness (the
    // caches' periodic rebuild is the safety net), so it does not fail the import.
    if (writer.inserted + writer.updated > 0) await announceImportedLeads(db).catch(() => {});
  }
  errors.sort((a, b) => a.line - b.line);
  return { imported: writer.inserted, updated: writer.updated, rejected, errors };
}

async function* numbered(
  records: AsyncIterable<unknown> | Iterable<unknown>,
  form: RecordForm,
): AsyncGenerator<SourceItem> {
  let line = 0;
  for await (const value of records) {
    line += 1;
    yield { line, value, form };
  }
}

/**
 * Imports leads from an (async) iterable of raw records (objects with the API's field names, as
 * in an NDJSON file; `form: "csv"` for objects of strings). Errors name the item's position
 * (from 1) as `line`. Used by `generate-leads` and the benchmarks.
 */
export async function importLeadRecords(
  db: Db,
  records: AsyncIterable<unknown> | Iterable<unknown>,
  options: LeadImportOptions & { form?: RecordForm } = {},
): Promise<LeadImportResult> {
  return runImport(db, numbered(records, options.form ?? "json"), options);
}

/**
 * Imports an NDJSON (one lead per line) or CSV (same field names as headers) file, streamed.
 * The format comes from the extension (`.ndjson`, `.jsonl`, `.json`, `.csv`) or the first byte.
 */
export async function importLeadFile(
  db: Db,
  path: string,
  options: LeadImportOptions = {},
): Promise<LeadImportResult> {
  return runImport(db, await readImportFile(path), options);
}
