import { TEST_SIGNING_SECRET } from "./signing-secret.js";
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parse } from "csv-parse/sync";
import ExcelJS from "exceljs";
import { run } from "graphile-worker";
import { pino } from "pino";
import { createDatabase, type Db } from "../../src/db/database.js";
import { jobTaskList } from "../../src/jobs/index.js";
import { workerLogger } from "../../src/jobs/runtime.js";
import { LocalDiskStorage } from "../../src/storage/local-disk.js";
import { buildLeads, uniqueWord } from "./leads-factories.js";

/** Leads of one test: `count` leads whose company name holds a word no other test uses. */
export async function buildWordLeads(
  db: Db,
  count: number,
  overrides: (i: number) => Record<string, unknown> = () => ({}),
): Promise<{ word: string; ids: number[] }> {
  const word = uniqueWord("exj");
  const ids = await buildLeads(db, count, (i) => ({
    company_name: `${word} Company ${i}`,
    registered_url: `https://${word}-${i}.example.org`,
    // Later leads were updated last: the default sort (last update, descending) puts them first.
    last_buying_signal: new Date(Date.UTC(2026, 0, 1) + i * 60_000),
    last_updated: new Date(Date.UTC(2026, 0, 1) + i * 60_000),
    ...overrides(i),
  }));
  return { word, ids };
}

/** The rows of a CSV file (first row: headers), parsed with csv-parse. */
export function csvRecords(body: Buffer): Record<string, string>[] {
  return parse(body, { columns: true, skip_empty_lines: true, bom: true }) as Record<string, string>[];
}

/** The rows of the first sheet of an XLSX file, as objects keyed by the header row (exceljs). */
export async function xlsxRecords(body: Buffer): Promise<Record<string, unknown>[]> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(body as unknown as ArrayBuffer);
  const sheet = workbook.worksheets[0];
  if (!sheet) return [];
  const rows: unknown[][] = [];
  sheet.eachRow((row) => rows.push((row.values as unknown[]).slice(1)));
  const [headers, ...data] = rows;
  return data.map((values) =>
    Object.fromEntries((headers ?? []).map((h, i) => [String(h), values[i] ?? null])),
  );
}

/**
 * Starts a separate worker process (this file) on the test database that runs the job tasks with
 * the export job kind; resolves once it is ready. Kill it with `child.kill("SIGKILL")` to
 * simulate a crash mid-export.
 */
export async function startExportWorkerProcess(databaseUrl: string, filesDir: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", fileURLToPath(import.meta.url), "--export-worker", databaseUrl, filesDir],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("ready")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`export worker process exited with ${code}`)));
  });
  return child;
}

async function exportWorkerMain(databaseUrl: string, filesDir: string): Promise<void> {
  await import("../../src/exports/job/kind.js");
  const { db, pool } = createDatabase(databaseUrl, 5);
  const silent = pino({ level: "silent" });
  await run({
    pgPool: pool,
    concurrency: 2,
    noHandleSignals: true,
    pollInterval: 200,
    taskList: jobTaskList({
      db,
      storage: new LocalDiskStorage(filesDir),
      logger: silent,
      signingSecret: TEST_SIGNING_SECRET,
    }),
    logger: workerLogger(silent),
  });
  process.stdout.write("ready\n");
}

if (process.argv[2] === "--export-worker" && process.argv[1] === fileURLToPath(import.meta.url)) {
  exportWorkerMain(process.argv[3]!, process.argv[4]!).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
