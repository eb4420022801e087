import { stringify } from "csv-stringify";
import ExcelJS from "exceljs";
import { fork } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { columnsOf, encodingOf, type ExportRow } from "../../src/export-files/columns.js";
import { exportRowOf } from "../../test/helpers/export-rows.js";
import { DEFAULT_COLUMNS, defaultFileFormat, type FileFormat } from "../../src/export-files/format.js";
import { writeExportFiles } from "../../src/export-files/store.js";
import { LocalDiskStorage } from "../../src/storage/local-disk.js";

const ROWS = Number(process.env.BENCH_FILE_ROWS ?? 100_000);
const MODES = ["bare-csv", "service-csv", "bare-xlsx", "service-xlsx"] as const;
type Mode = (typeof MODES)[number];

/** A generated lead in the API's shape (20+ fields, lists included), built on demand. */
function lead(i: number): Record<string, unknown> {
  return {
    id: i + 1,
    databaseType: "other",
    companyName: `Company ${i} Plumbing & Heating`,
    website: `https://company${i}.example.com`,
    email: `info@company${i}.example.com`,
    emailSecondary: i % 3 === 0 ? `sales@company${i}.example.com` : null,
    phone: `(512) 555-${String(i % 10_000).padStart(4, "0")}`,
    phoneSecondary: null,
    address: `${i} Main Street`,
    city: "Austin",
    state: "TX",
    zip: "78701",
    country: "US",
    category: "Plumber",
    aiCategoryEstimation: ["Plumbing", "Home services"],
    description: "A family business offering plumbing, heating and emergency repairs since 2010.",
    stars: 4.5,
    reviewCount: i % 500,
    lastBuyingSignal: "2026-11-01T10:00:00.000Z",
    buyingSignalType: ["new_website", "new_social_profile"],
    lastUpdated: "2026-11-01T10:00:00.000Z",
  };
}

function* leads(): Generator<Record<string, unknown>> {
  for (let i = 0; i < ROWS; i += 1) yield lead(i);
}

/** The same row as plain cell values, for the bare writers. */
function plainRow(l: Record<string, unknown>): unknown[] {
  return DEFAULT_COLUMNS.map((field) => {
    const value = l[field];
    return Array.isArray(value) ? value.join("; ") : value;
  });
}

async function bareCsv(dir: string): Promise<number> {
  const path = join(dir, "bare.csv");
  const stringifier = stringify();
  const done = pipeline(stringifier, createWriteStream(path));
  stringifier.write([...DEFAULT_COLUMNS]);
  for (const l of leads()) {
    if (!stringifier.write(plainRow(l))) await new Promise((r) => stringifier.once("drain", r));
  }
  stringifier.end();
  await done;
  return statSync(path).size;
}

async function bareXlsx(dir: string): Promise<number> {
  const path = join(dir, "bare.xlsx");
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
    filename: path,
    useStyles: false,
    useSharedStrings: false,
  });
  const sheet = workbook.addWorksheet("Leads");
  sheet.addRow([...DEFAULT_COLUMNS]).commit();
  for (const l of leads()) sheet.addRow(plainRow(l)).commit();
  sheet.commit();
  await workbook.commit();
  return statSync(path).size;
}

/** The leads as the writers take them: export rows of the format, in batches of 1,000. */
function* rowBatches(format: FileFormat): Generator<ExportRow[]> {
  const columns = columnsOf(format);
  const encoding = encodingOf(format.fileType);
  let batch: ExportRow[] = [];
  for (const l of leads()) {
    batch.push(exportRowOf(l, columns, encoding));
    if (batch.length === 1_000) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * The service's writers through writeExportFiles into local-disk storage. An XLSX file holds at
 * most 20,000 rows (XLSX_MAX_ROWS, src/export-files/errors.ts), so the XLSX export is split
 * max_rows 20,000: five workbooks plus the ZIP answer holding them.
 */
async function service(dir: string, fileType: "csv" | "xlsx"): Promise<number> {
  const storage = new LocalDiskStorage(dir);
  const plain = defaultFileFormat(fileType);
  const format: FileFormat =
    fileType === "xlsx"
      ? { ...plain, splitFiles: true, splitMode: "max_rows", maxRowsPerFile: 20_000 }
      : plain;
  const written = await writeExportFiles(storage, {
    accountId: 1,
    rows: rowBatches(format),
    totalCount: ROWS,
    format,
  });
  return (await storage.size(written.answer.storageKey)) ?? 0;
}

/** Child process: runs one mode and reports its time and peak RSS. */
async function child(mode: Mode): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bench-files-"));
  const started = performance.now();
  const bytes =
    mode === "bare-csv"
      ? await bareCsv(dir)
      : mode === "bare-xlsx"
        ? await bareXlsx(dir)
        : await service(dir, mode === "service-csv" ? "csv" : "xlsx");
  const ms = Math.round(performance.now() - started);
  rmSync(dir, { recursive: true, force: true });
  process.send?.({ mode, ms, bytes, peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024) });
}

function runChild(mode: Mode): Promise<{ mode: Mode; ms: number; bytes: number; peakRssMb: number }> {
  return new Promise((resolve, reject) => {
    const proc = fork(fileURLToPath(import.meta.url), ["--child", mode], { execArgv: ["--import", "tsx"] });
    proc.once("message", (msg) => resolve(msg as never));
    proc.once("exit", (code) => (code === 0 ? undefined : reject(new Error(`${mode} exited with ${code}`))));
  });
}

/**
 * Writes ROWS (100,000) generated leads with the default columns as CSV and as XLSX through the
 * service's writers (writeExportFiles into local-disk storage) and with bare csv-stringify /
 * exceljs writes, each in its own process (so peak RSS is its own), alternating, twice.
 */
export async function benchFiles(): Promise<Record<string, unknown>> {
  const runs: Record<Mode, { ms: number; peakRssMb: number; bytes: number }[]> = {
    "bare-csv": [],
    "service-csv": [],
    "bare-xlsx": [],
    "service-xlsx": [],
  };
  for (let round = 0; round < 2; round += 1) {
    for (const mode of MODES) {
      const result = await runChild(mode);
      runs[mode].push({ ms: result.ms, peakRssMb: result.peakRssMb, bytes: result.bytes });
    }
  }
  const best = (mode: Mode) => ({
    ms: Math.min(...runs[mode].map((r) => r.ms)),
    peakRssMb: Math.max(...runs[mode].map((r) => r.peakRssMb)),
    bytes: runs[mode][0]!.bytes,
  });
  const summary = Object.fromEntries(MODES.map((mode) => [mode, best(mode)]));
  return {
    rows: ROWS,
    ...summary,
    csvTimeRatio: +(best("service-csv").ms / best("bare-csv").ms).toFixed(2),
    xlsxTimeRatio: +(best("service-xlsx").ms / best("bare-xlsx").ms).toFixed(2),
    runs,
  };
}

if (process.argv[2] === "--child") {
  child(process.argv[3] as Mode).then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
