import { stringify } from "csv-stringify";
import ExcelJS from "exceljs";
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { sql } from "kysely";
import { createAccountWithKey } from "../../src/accounts/service.js";
import { classifyPendingLeads } from "../../src/ai/classification.js";
import { createAiEngine } from "../../src/ai/services.js";
import { createDatabase, migrateToLatest, type Db } from "../../src/db/database.js";
import { createExportFormat } from "../../src/export-formats/service.js";
import { DEFAULT_COLUMNS } from "../../src/export-files/format.js";
import { generateLeads } from "../../src/leads/import/generate.js";
import { importLeadRecords } from "../../src/leads/import/importer.js";
import { toLead } from "../../src/leads/presenter.js";
import { findLeadsByIds } from "../../src/leads/repository.js";
import { hugePagesStatus, startService, stopProcess, ownDatabase } from "./lib.js";

const LEADS = Number(process.env.BENCH_EXPORT_LEADS ?? 100_000);
const SEED = 20261123;
/** Any vowel in the searched columns: every generated lead matches. */
const FILTERS = { positiveKeywords: ["a", "e", "i", "o", "u"] };
const XLSX_ROWS_PER_FILE = 20_000;

/**
 * Starts a new peak of a process's resident memory (`VmHWM`): writing 5 to `/proc/<pid>/clear_refs`
 * resets it to the current size (Linux), so each export's peak is its own.
 */
function resetPeak(pid: number): void {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
  } catch {
    // not Linux, or not allowed: the peak is then the process's whole life
  }
}

/** Resident memory of a running process in MB: peak (`VmHWM`) or current (`VmRSS`). */
function rssMb(pid: number, field: "VmHWM" | "VmRSS" = "VmHWM"): number | undefined {
  try {
    const kb = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb === undefined ? undefined : Math.round(Number(kb) / 1024);
  } catch {
    return undefined;
  }
}

/**
 * POST /leads/export answered asynchronously, then polled (every 50 ms, so the job's phases can
 * be timed) until the answer comes (the file itself for `accept` naming a file type, the JSON
 * answer for `application/json`); seconds, bytes, the seconds each phase of the job took and the
 * service's peak resident memory during the export.
 */
async function timeExport(
  base: string,
  pid: number,
  apiKey: string,
  body: Record<string, unknown>,
  accept: string,
) {
  const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json", accept };
  resetPeak(pid);
  const started = performance.now();
  const phases: Record<string, number> = {};
  /** Largest resident memory of the service seen during each phase, in MB. */
  const phaseRssMb: Record<string, number> = {};
  let res = await fetch(`${base}/api/v1/leads/export`, {
    method: "POST",
    headers: { ...headers, prefer: "respond-async" },
    body: JSON.stringify(body),
  });
  const accepted = performance.now();
  if (res.status === 202) {
    const { statusUrl } = (await res.json()) as { statusUrl: string };
    for (;;) {
      res = await fetch(`${base}${statusUrl}`, { headers: { ...headers, prefer: "wait=0" } });
      if (res.status !== 202) break;
      const { phase } = (await res.json()) as { phase: string };
      phases[phase] ??= performance.now();
      phaseRssMb[phase] = Math.max(phaseRssMb[phase] ?? 0, rssMb(pid, "VmRSS") ?? 0);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const answered = performance.now();
  // Read as a client saving the file would: chunk by chunk, not gathered into one buffer.
  let bytes = 0;
  for await (const chunk of res.body ?? []) bytes += (chunk as Uint8Array).byteLength;
  const downloaded = performance.now();
  if (res.status !== 200) throw new Error(`export answered ${res.status}`);
  const peakRssMb = rssMb(pid);
  // Each phase lasts from when it was first seen to when the next one (or the answer) was.
  const seen = Object.entries(phases).sort((a, b) => a[1] - b[1]);
  const phaseSeconds = Object.fromEntries(
    seen.map(([name, at], i) => [name, Number((((seen[i + 1]?.[1] ?? answered) - at) / 1000).toFixed(1))]),
  );
  const secondsOf = (from: number, to: number) => Number(((to - from) / 1000).toFixed(2));
  return {
    seconds: secondsOf(started, downloaded),
    /** Until the 202 arrived, until the answer's headers arrived (after the last poll), the body. */
    steps: {
      accepted: secondsOf(started, accepted),
      answered: secondsOf(started, answered),
      download: secondsOf(answered, downloaded),
    },
    bytes,
    contentType: res.headers.get("content-type"),
    phaseSeconds,
    phaseRssMb,
    peakRssMb,
  };
}

/** The exported leads in the API's shape, read once into memory for the bare writers. */
async function readLeads(db: Db): Promise<Record<string, unknown>[]> {
  const rows = await db.selectFrom("leads").select("id").orderBy("id").execute();
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < rows.length; i += 1_000) {
    const chunk = rows.slice(i, i + 1_000).map((r) => r.id);
    for (const lead of await findLeadsByIds(db, chunk))
      out.push(toLead(lead) as unknown as Record<string, unknown>);
  }
  return out;
}

/** A lead's default columns as plain cell values (lists joined, as the service writes them). */
function plainRow(lead: Record<string, unknown>): unknown[] {
  return DEFAULT_COLUMNS.map((field) => {
    const value = lead[field];
    return Array.isArray(value) ? value.join(", ") : (value ?? "");
  });
}

/** csv-stringify straight to a file. */
async function bareCsv(leads: Record<string, unknown>[], file: string): Promise<number> {
  const started = performance.now();
  const csv = stringify({ header: true, columns: [...DEFAULT_COLUMNS] });
  const writing = pipeline(csv, createWriteStream(file));
  for (const lead of leads) {
    if (!csv.write(plainRow(lead))) await new Promise((r) => csv.once("drain", r));
  }
  csv.end();
  await writing;
  return (performance.now() - started) / 1000;
}

/** exceljs streaming writer straight to files of 20,000 rows (what the XLSX export writes). */
async function bareXlsx(leads: Record<string, unknown>[], dir: string): Promise<number> {
  const started = performance.now();
  for (let part = 0; part * XLSX_ROWS_PER_FILE < leads.length; part += 1) {
    const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
      filename: join(dir, `bare_part${part + 1}.xlsx`),
      useStyles: false,
      useSharedStrings: false,
    });
    const sheet = workbook.addWorksheet("Leads");
    sheet.addRow([...DEFAULT_COLUMNS]).commit();
    for (const lead of leads.slice(part * XLSX_ROWS_PER_FILE, (part + 1) * XLSX_ROWS_PER_FILE)) {
      sheet.addRow(plainRow(lead)).commit();
    }
    sheet.commit();
    await workbook.commit();
  }
  return (performance.now() - started) / 1000;
}

/**
 * Does the background work an import leaves before the exports are timed, so they run on a quiet
 * service as the goal asks: the classification of the generated leads without a category estimate
 * (a quarter of them; the service's `ai__classify_leads` would otherwise run beside the first
 * exports for minutes), then VACUUM ANALYZE of the leads (what autovacuum would do after those
 * updates, mid-measurement). Seconds taken.
 */
async function settleImportedLeads(db: Db): Promise<number> {
  const started = performance.now();
  await classifyPendingLeads(db, createAiEngine(db, undefined), {
    budgetMs: 600_000,
    pauseMs: 0,
    batchSize: 1_000,
  });
  await sql`vacuum analyze leads`.execute(db);
  // The import's and the vacuum's dirty pages written out now, not by the first export's reads.
  await sql`checkpoint`.execute(db);
  return (performance.now() - started) / 1000;
}

/**
 * A 100,000-lead export end to end through HTTP (the service as a child process, API and worker
 * in one, charging and recording included, after one small warm-up export): as the CSV file
 * itself, as the JSON answer with the CSV inline (`data`, request to last byte; twice:
 * `jsonFirst` as the process's first large export, `json` 15 s after the CSV file), and as XLSX
 * (split into files of 20,000 rows, answered as a ZIP), against csv-stringify (the median of three
 * runs) and exceljs writing the same rows straight to files in the same run. Goals: CSV file and
 * JSON answer each within 2x, XLSX within 1.5x of the bare write; service peak RSS < 400 MB during
 * each export.
 */
export async function benchExport(databaseUrl: string): Promise<Record<string, unknown>> {
  const target = await ownDatabase(databaseUrl, "export");
  const dir = mkdtempSync(join(tmpdir(), "lead-bench-export-"));
  const { db } = createDatabase(target.url, 4);
  try {
    await migrateToLatest(db);
    const importStart = performance.now();
    await importLeadRecords(db, generateLeads(LEADS, SEED));
    const importSeconds = (performance.now() - importStart) / 1000;
    const settleSeconds = await settleImportedLeads(db);
    // One account per export, so each pays for every lead (the sticky rule would make a second free).
    const account = (name: string) =>
      createAccountWithKey(db, { email: `bench-${name}-${Date.now()}@example.com`, plan: "enterprise" });
    const csvAccount = await account("csv");
    const xlsxAccount = await account("xlsx");
    const jsonFirstAccount = await account("json-first");
    const jsonAccount = await account("json");
    const warmUpAccount = await account("warm-up");
    const xlsxFormat = await createExportFormat(db, xlsxAccount.accountId, {
      name: "Bench XLSX",
      fileType: "xlsx",
      fieldMappings: DEFAULT_COLUMNS.map((f) => ({ sourceField: f, exportName: f, type: "field" as const })),
      splitFiles: true,
      splitMode: "max_rows",
      maxRowsPerFile: XLSX_ROWS_PER_FILE,
    });

    const { base, service } = await startService(target.url, dir);
    let csv, jsonFirst, json, xlsx, peak;
    const pid = service.pid ?? -1;
    const peakAfterStart = rssMb(pid);
    try {
      // Warm-up (not timed): a first small export of each answer compiles the request's
      // validators and the export code paths once, as any running service has.
      await timeExport(base, pid, warmUpAccount.apiKey, { ...FILTERS, maxResults: 10 }, "text/csv");
      await timeExport(
        base,
        pid,
        warmUpAccount.apiKey,
        { filters: FILTERS, maxResults: 10 },
        "application/json",
      );
      // The real service's form: filters nested, the JSON answer with the CSV in `files[].data`.
      // First of the large exports, so its time and peak include the process's first growth.
      jsonFirst = await timeExport(
        base,
        pid,
        jsonFirstAccount.apiKey,
        { filters: FILTERS },
        "application/json",
      );
      csv = await timeExport(base, pid, csvAccount.apiKey, FILTERS, "text/csv");
      // The same answer again, as a working service gives it: after earlier large exports, and
      // 15 s after the last one (longer than pg's default idle timeout of pooled connections).
      await new Promise((r) => setTimeout(r, 15_000));
      json = await timeExport(base, pid, jsonAccount.apiKey, { filters: FILTERS }, "application/json");
      xlsx = await timeExport(
        base,
        pid,
        xlsxAccount.apiKey,
        { ...FILTERS, formatId: xlsxFormat.id },
        "application/zip",
      );
      peak = Math.max(...[csv, jsonFirst, json, xlsx].map((e) => e.peakRssMb ?? 0));
    } finally {
      await stopProcess(service);
    }

    const leads = await readLeads(db);
    // The bare write's time varied by up to 1.6x between runs: the median of three.
    const bareCsvRuns: number[] = [];
    for (let i = 0; i < 3; i += 1) bareCsvRuns.push(await bareCsv(leads, join(dir, "bare.csv")));
    const bareCsvSeconds = [...bareCsvRuns].sort((a, b) => a - b)[1]!;
    const bareXlsxSeconds = await bareXlsx(leads, dir);
    return {
      leads: leads.length,
      importSeconds: Number(importSeconds.toFixed(1)),
      settleSeconds: Number(settleSeconds.toFixed(1)),
      postgresHugePages: await hugePagesStatus(db),
      service: {
        csv,
        jsonFirst,
        json,
        xlsx,
        peakRssMbAfterStart: peakAfterStart,
        peakRssMbDuringExports: peak,
      },
      bare: {
        csvSeconds: Number(bareCsvSeconds.toFixed(2)),
        csvRunsSeconds: bareCsvRuns.map((seconds) => Number(seconds.toFixed(2))),
        xlsxSeconds: Number(bareXlsxSeconds.toFixed(2)),
      },
      ratio: {
        csv: Number((csv.seconds / bareCsvSeconds).toFixed(2)),
        jsonFirst: Number((jsonFirst.seconds / bareCsvSeconds).toFixed(2)),
        json: Number((json.seconds / bareCsvSeconds).toFixed(2)),
        xlsx: Number((xlsx.seconds / bareXlsxSeconds).toFixed(2)),
      },
      goal: "CSV file and JSON answer within 2x, XLSX within 1.5x of the bare write; service peak RSS < 400 MB",
    };
  } finally {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
    await target.drop();
  }
}
