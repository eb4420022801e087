import type { FileFormat } from "../../export-files/format.js";
import { ApiError, describeDetails, errors, type ErrorDetail } from "../../http/errors.js";
import { parseSearchFilters, searchFiltersToJson, type SearchFilters } from "../../leads/search/filters.js";
import { parseDeliveryChannel, type DeliveryChannel } from "../../leads/delivery-channel.js";
import type { ExportCaps } from "./selection.js";

/**
 * How an export answers: `file` the file itself (a ZIP when split), `json` the JSON answer with
 * each file's contents, `links` the JSON answer with each file's links instead (`inline: false`).
 */
export type ExportAnswerForm = "file" | "json" | "links";

/** What the export job receives (stored with the job, so JSON only). */
export interface ExportJobInput {
  /** The search filters in their canonical body form (searchFiltersToJson); null with `selectedIds`. */
  filters: Record<string, unknown> | null;
  /** The leads to export instead of a search (distinct ids); null for a search. */
  selectedIds: number[] | null;
  caps: ExportCaps;
  /** Only leads the account has not received. */
  excludePurchased: boolean;
  /** The format resolved when the request arrived (with the `fileType` override applied). */
  format: FileFormat;
  answer: ExportAnswerForm;
  /** Base of the signed links (`PUBLIC_BASE_URL` of the API that took the request). */
  publicBaseUrl: string;
  /** The channel recorded as `exportMethod` (src/exports/method.ts); `api` for inputs stored before it. */
  method: DeliveryChannel;
}

/** Which leads an export takes: a search, or exactly the given leads (in the default sort). */
export interface ExportLeads {
  /** The search; with `selectedIds`, the default parameters (only their sort is used). */
  filters: SearchFilters;
  selectedIds: readonly number[] | null;
  excludePurchased: boolean;
}

/** The export request's own members besides the leads (types checked by the contract). */
export interface ExportOptions {
  caps: ExportCaps;
  formatId: number | null;
  fileType: FileFormat["fileType"] | null;
  inline: boolean;
}

/** Members of the export body that are not search parameters. */
const EXPORT_MEMBERS = new Set([
  "filters",
  "selectedIds",
  "maxLeads",
  "maxResults",
  "maxCredits",
  "excludePurchased",
  "formatId",
  "fileType",
  "inline",
]);
/** Cost controls the real service ignores inside `filters`: applied here as if at the top level. */
const CONTROLS_IN_FILTERS = ["maxCredits", "maxResults", "excludePurchased"] as const;
/** Members that only the top level of the body takes: refused inside `filters`. */
const TOP_LEVEL_ONLY = ["filters", "selectedIds", "maxLeads", "formatId", "fileType", "inline"];

type Body = Record<string, unknown>;

const has = (object: Body | undefined, key: string): boolean => object?.[key] !== undefined;
const intOrNull = (value: unknown): number | null => (typeof value === "number" ? value : null);

/** The default search parameters: the order of a `selectedIds` export. */
export function defaultFilters(): SearchFilters {
  return parseSearchFilters({}, "body", { requirePositive: false });
}

/**
 * Reads the export request (its body and `?inline=`): the leads (the search parameters in
 * `filters` or, the earlier form, at the top level; or `selectedIds`), the cost controls and the
 * output choice. Throws 400 `validation_error` listing every problem (`details` under `body` and
 * `query`): search parameters both in `filters` and at the top level, `selectedIds` beside search
 * parameters, a cost control given in `filters` and at the top level with different values, a
 * top-level member inside `filters`, the two `inline` values differing, invalid search parameters,
 * no positive filter without `selectedIds`. Types and bounds were checked by the contract.
 */
export function parseExportRequest(
  body: unknown,
  query: { inline?: boolean } = {},
): { leads: ExportLeads; options: ExportOptions } {
  const raw = (body ?? {}) as Body;
  const problems: ErrorDetail[] = [];
  const nested = has(raw, "filters") ? (raw.filters as Body) : undefined;

  // The search parameters: in `filters`, or every member that is not the export's own.
  let search: Body;
  let searchPath: string[];
  if (nested) {
    searchPath = ["body", "filters"];
    search = {};
    for (const [key, value] of Object.entries(nested)) {
      if (TOP_LEVEL_ONLY.includes(key)) {
        problems.push({ path: [...searchPath, key], message: "belongs at the top level of the body" });
      } else if (!(CONTROLS_IN_FILTERS as readonly string[]).includes(key)) search[key] = value;
    }
    for (const key of Object.keys(raw)) {
      // `database` (ignored, as in the search) may stand beside `filters`.
      if (!EXPORT_MEMBERS.has(key) && key !== "database") {
        problems.push({
          path: ["body", key],
          message: "search parameters go inside `filters` when `filters` is sent, not at the top level",
        });
      }
    }
  } else {
    searchPath = ["body"];
    search = Object.fromEntries(Object.entries(raw).filter(([key]) => !EXPORT_MEMBERS.has(key)));
  }

  // Cost controls given in `filters` apply as at the top level; both with different values: 400.
  const control = (key: (typeof CONTROLS_IN_FILTERS)[number]): unknown => {
    if (has(nested, key) && has(raw, key) && nested![key] !== raw[key]) {
      problems.push({
        path: ["body", "filters", key],
        message: `differs from the top-level ${key}; send it once, at the top level`,
      });
    }
    return has(raw, key) ? raw[key] : nested?.[key];
  };
  const caps: ExportCaps = {
    maxLeads: intOrNull(raw.maxLeads),
    maxResults: intOrNull(control("maxResults")),
    maxCredits: intOrNull(control("maxCredits")),
  };
  const excludePurchased = control("excludePurchased") === true;

  const inlineBody = typeof raw.inline === "boolean" ? raw.inline : undefined;
  const inlineQuery = typeof query.inline === "boolean" ? query.inline : undefined;
  if (inlineBody !== undefined && inlineQuery !== undefined && inlineBody !== inlineQuery) {
    problems.push({ path: ["query", "inline"], message: "differs from the body's inline" });
  }

  let filters: SearchFilters | undefined;
  let selectedIds: number[] | null = null;
  if (Array.isArray(raw.selectedIds)) {
    selectedIds = [...new Set(raw.selectedIds as number[])];
    const given = Object.keys(search).filter((key) => key !== "database" && search[key] !== undefined);
    for (const key of given) {
      problems.push({
        path: [...searchPath, key],
        message: "selectedIds exports exactly those leads: send no search parameters with it",
      });
    }
    filters = defaultFilters();
  } else {
    try {
      filters = parseSearchFilters(search, "body", { path: searchPath });
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 400 || !err.details) throw err;
      problems.push(...err.details);
    }
  }
  if (problems.length > 0 || !filters) {
    throw errors.validation(describeDetails(problems, "Invalid export request"), problems);
  }

  const fileType = raw.fileType;
  return {
    leads: { filters, selectedIds, excludePurchased },
    options: {
      caps,
      formatId: intOrNull(raw.formatId),
      fileType: fileType === "csv" || fileType === "json" || fileType === "xlsx" ? fileType : null,
      inline: inlineBody ?? inlineQuery ?? true,
    },
  };
}

/** The stored job input, checked (queued jobs outlive code): throws when it is not one. */
export function parseExportJobInput(raw: unknown): ExportJobInput {
  const input = raw as
    | (Partial<ExportJobInput> & {
        /** Inputs stored before `answer`: `true` the file, `false` the links. */
        inline?: boolean;
      })
    | null;
  if (
    !input ||
    typeof input !== "object" ||
    typeof input.format !== "object" ||
    input.format === null ||
    typeof input.caps !== "object" ||
    input.caps === null ||
    typeof input.publicBaseUrl !== "string"
  ) {
    throw new Error("not an export job input");
  }
  const answer: ExportAnswerForm =
    input.answer === "file" || input.answer === "json" || input.answer === "links"
      ? input.answer
      : input.inline === false
        ? "links"
        : "file";
  const selectedIds = Array.isArray(input.selectedIds)
    ? input.selectedIds.filter(Number.isSafeInteger)
    : null;
  const filters = input.filters && typeof input.filters === "object" ? input.filters : null;
  if (!filters && !selectedIds) throw new Error("an export job input needs filters or selectedIds");
  const caps: ExportCaps = {
    maxLeads: intOrNull(input.caps.maxLeads),
    maxResults: intOrNull(input.caps.maxResults),
    maxCredits: intOrNull(input.caps.maxCredits),
  };
  if (filters) parseSearchFilters(filters, "body");
  return {
    filters,
    selectedIds,
    caps,
    excludePurchased: input.excludePurchased === true,
    format: input.format,
    answer,
    publicBaseUrl: input.publicBaseUrl,
    method: parseDeliveryChannel(input.method),
  };
}

/** The leads of a stored job input. */
export function exportLeadsOf(input: ExportJobInput): ExportLeads {
  return {
    filters: input.filters ? parseSearchFilters(input.filters, "body") : defaultFilters(),
    selectedIds: input.selectedIds,
    excludePurchased: input.excludePurchased,
  };
}

/** The stored form of the leads' filters: canonical body form, or null with `selectedIds`. */
export function storedFilters(leads: ExportLeads): Record<string, unknown> | null {
  return leads.selectedIds ? null : searchFiltersToJson(leads.filters);
}
