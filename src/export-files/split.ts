import { exportTooLarge, XLSX_MAX_ROWS } from "./errors.js";
import type { ExportFileType, FileFormat } from "./format.js";

/** One file of an export, as planned before writing. */
export interface PlannedFile {
  fileName: string;
  /** Leads in the file. */
  rows: number;
  /** 1, 2, ... for the parts of a split export; null for a single file or `_total`. */
  partNumber: number | null;
  /** The `_total` file of a split export (every lead). */
  isTotal: boolean;
}

/** The files of one export: parts in order, then `_total` when asked for. */
export interface ExportPlan {
  /** More than one part: the answer is a ZIP. */
  split: boolean;
  parts: PlannedFile[];
  total: PlannedFile | null;
  /** Every file: the parts, then the total. */
  files: PlannedFile[];
}

/** The base name of export files: `leads-main-2026-11-22` (UTC date; `main` is the Main database). */
export function exportBaseName(date: Date, prefix = "leads-main"): string {
  return `${prefix}-${date.toISOString().slice(0, 10)}`;
}

/** The file name of a file of the export: `<base>.csv`, `<base>_part2.csv`, `<base>_total.csv`. */
export function exportFileName(baseName: string, fileType: ExportFileType | "zip", suffix = ""): string {
  return `${baseName}${suffix}.${fileType}`;
}

/**
 * Most leads the format can put in one export: `numberOfParts` x `maxRowsPerFile` for
 * `parts_max_rows`; null when the format sets no limit.
 */
export function formatLeadCapacity(format: FileFormat): number | null {
  if (
    format.splitFiles &&
    format.splitMode === "parts_max_rows" &&
    format.numberOfParts &&
    format.maxRowsPerFile
  ) {
    return format.numberOfParts * format.maxRowsPerFile;
  }
  return null;
}

/** `rows` spread over `parts` files as evenly as possible (the first files take the remainder). */
function evenSizes(rows: number, parts: number): number[] {
  const base = Math.floor(rows / parts);
  const extra = rows % parts;
  return Array.from({ length: parts }, (_, i) => base + (i < extra ? 1 : 0));
}

/** Sizes of the parts of `rows` leads under the format's split rule (one entry: no split). */
function partSizes(format: FileFormat, rows: number): number[] {
  if (!format.splitFiles || !format.splitMode) return [rows];
  const maxRows = format.maxRowsPerFile ?? 0;
  const parts = format.numberOfParts ?? 0;
  switch (format.splitMode) {
    case "max_rows": {
      if (maxRows < 1) return [rows];
      const count = Math.max(1, Math.ceil(rows / maxRows));
      return Array.from({ length: count }, (_, i) => Math.min(maxRows, rows - i * maxRows));
    }
    case "equal_parts":
      return parts < 2 ? [rows] : evenSizes(rows, parts);
    case "parts_max_rows": {
      if (parts < 2 || maxRows < 1) return [rows];
      if (rows > parts * maxRows) {
        throw new Error(
          `${rows} leads exceed the format's capacity of ${parts * maxRows}; cap the export first`,
        );
      }
      return evenSizes(rows, parts);
    }
  }
}

/**
 * The files an export of `rows` leads is written as. A split that yields one part is a single
 * file (no `_part1`, no `_total`); `equal_parts` and `parts_max_rows` always yield exactly
 * `numberOfParts` files, even when some are empty.
 */
export function planExport(format: FileFormat, rows: number, baseName: string): ExportPlan {
  const sizes = partSizes(format, rows);
  const type = format.fileType;
  if (sizes.length === 1) {
    const file: PlannedFile = {
      fileName: exportFileName(baseName, type),
      rows,
      partNumber: null,
      isTotal: false,
    };
    return { split: false, parts: [file], total: null, files: [file] };
  }
  const parts = sizes.map((size, i) => ({
    fileName: exportFileName(baseName, type, `_part${i + 1}`),
    rows: size,
    partNumber: i + 1,
    isTotal: false,
  }));
  const total = format.includeTotal
    ? { fileName: exportFileName(baseName, type, "_total"), rows, partNumber: null, isTotal: true }
    : null;
  return { split: true, parts, total, files: total ? [...parts, total] : parts };
}

/**
 * Throws 400 `export_too_large` when an XLSX file of this export would hold more than 20,000 leads
 * (a single file, a part, or the `_total` file). Call it before anything is charged.
 */
export function assertExportFits(format: FileFormat, rows: number): void {
  if (format.fileType !== "xlsx") return;
  const capacity = formatLeadCapacity(format);
  const plan = planExport(format, capacity === null ? rows : Math.min(rows, capacity), "check");
  const largest = Math.max(0, ...plan.files.map((file) => file.rows));
  if (largest > XLSX_MAX_ROWS) throw exportTooLarge(largest);
}
