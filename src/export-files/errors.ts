import { ApiError } from "../http/errors.js";

/** Rows an XLSX file may hold (docs/export-files.md, "XLSX check"). */
export const XLSX_MAX_ROWS = 20_000;

/** 400 `export_too_large`: an XLSX file of the export would hold more than 20,000 leads. */
export function exportTooLarge(rows: number): ApiError {
  return new ApiError(
    400,
    "export_too_large",
    `An XLSX file holds at most ${XLSX_MAX_ROWS.toLocaleString("en-US")} rows, and this export would put ` +
      `${rows.toLocaleString("en-US")} leads in one file. Use an XLSX format with splitFiles true, splitMode ` +
      `max_rows, maxRowsPerFile of ${XLSX_MAX_ROWS.toLocaleString("en-US")} or less and includeTotal false, ` +
      `or export fewer leads.`,
  );
}
