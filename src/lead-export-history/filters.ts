import { ApiError, describeDetails, type ErrorDetail } from "../http/errors.js";

/** The channels a lead can be exported through. */
export const LEAD_EXPORT_METHODS = ["dashboard", "api", "email_schedule", "crm_push", "enrichment"] as const;
export type LeadExportMethod = (typeof LEAD_EXPORT_METHODS)[number];

/** Which entries of an account's lead export history to select. */
export interface HistoryFilter {
  /** Always `other`: any `databaseType` resolves to the Main database. */
  databaseType: "other";
  /** Entries exported at or after this instant (UTC midnight of `dateFrom`). */
  exportedFrom: Date | null;
  /** Entries exported before this instant (UTC midnight of the day after `dateTo`). */
  exportedBefore: Date | null;
  /** Entries last exported through this channel (another string matches no entry). */
  exportMethod: string | null;
}

/** How invalid filters are reported: query parameters (400 `validation_error`) or a body (`bad_request`). */
export interface FilterErrorStyle {
  code: "validation_error" | "bad_request";
  /** Path prefix of the `details` entries, for example `["query"]` or `["body", "filters"]`. */
  path: readonly string[];
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * A `YYYY-MM-DD` day as the UTC instant it starts at; undefined unless it is a real calendar day
 * with a year from 1 to 9999 (`0000-01-01` and `2026-02-30` are not).
 */
export function parsePlainDate(value: string): Date | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(0, 0, 0, 0);
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    return undefined;
  }
  return date;
}

/**
 * Checks the history filters (`databaseType`, `dateFrom`, `dateTo`, `exportMethod`) of a query or of
 * a request body's `filters` object. Dates must be `YYYY-MM-DD` days of years 1-9999, the other two
 * strings; `dateTo` includes its whole day (UTC). Throws 400 with the given code and one detail per
 * problem. Unknown members are ignored.
 */
export function parseHistoryFilter(raw: Record<string, unknown>, style: FilterErrorStyle): HistoryFilter {
  const problems: ErrorDetail[] = [];
  const date = (name: "dateFrom" | "dateTo"): Date | null => {
    const value = raw[name];
    if (value === undefined || value === null) return null;
    const parsed = typeof value === "string" ? parsePlainDate(value) : undefined;
    if (!parsed) {
      problems.push({
        path: [...style.path, name],
        message: "must be a date YYYY-MM-DD with a year from 1 to 9999",
      });
      return null;
    }
    return parsed;
  };
  const text = (name: "databaseType" | "exportMethod"): string | null => {
    const value = raw[name];
    if (value === undefined || value === null) return null;
    if (typeof value !== "string") {
      problems.push({ path: [...style.path, name], message: "must be a string" });
      return null;
    }
    return value;
  };
  const exportedFrom = date("dateFrom");
  const dateTo = date("dateTo");
  text("databaseType");
  const exportMethod = text("exportMethod");
  if (problems.length > 0) {
    throw new ApiError(400, style.code, describeDetails(problems, "Invalid filters"), problems);
  }
  return {
    databaseType: "other",
    exportedFrom,
    exportedBefore: dateTo && new Date(dateTo.getTime() + DAY_MS),
    exportMethod,
  };
}
