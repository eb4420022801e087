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

/** 410 `file_unavailable`: an exported file past its expiry or no longer stored. */
export function fileUnavailable(reason: "expired" | "missing" | "link_expired"): ApiError {
  const message = {
    expired: "This file has expired (exported files are kept 90 days).",
    missing: "This file is no longer available.",
    link_expired: "This download link has expired (links are valid 15 minutes); request a new one.",
  }[reason];
  return new ApiError(410, "file_unavailable", message);
}
