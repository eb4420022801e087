import { parseSearchFilters, searchFiltersToJson, type SearchFilters } from "../../leads/search/filters.js";
import type { FileFormat } from "../../export-files/format.js";
import type { ExportCaps } from "./selection.js";

/** What the export job receives (stored with the job, so JSON only). */
export interface ExportJobInput {
  /** The search filters in their canonical body form (searchFiltersToJson). */
  filters: Record<string, unknown>;
  caps: ExportCaps;
  /** The format resolved when the request arrived (with the `fileType` override applied). */
  format: FileFormat;
  /** `true`: the answer is the file; `false`: JSON with export history ids and signed links. */
  inline: boolean;
  /** Base of the signed links (`PUBLIC_BASE_URL` of the API that took the request). */
  publicBaseUrl: string;
}

/** The export request's own members besides the filters (already checked by the contract). */
export interface ExportOptions {
  caps: ExportCaps;
  formatId: number | null;
  fileType: FileFormat["fileType"] | null;
  inline: boolean;
}

const intOrNull = (value: unknown): number | null => (typeof value === "number" ? value : null);

/**
 * Reads the export body: the search filters (400 `validation_error` with `details` under `body`,
 * also without a positive filter) and the cost controls and output choice, whose types and
 * bounds the contract's validator already checked.
 */
export function parseExportRequest(body: unknown): { filters: SearchFilters; options: ExportOptions } {
  const filters = parseSearchFilters(body, "body");
  const raw = body as Record<string, unknown>;
  const fileType = raw.fileType;
  return {
    filters,
    options: {
      caps: {
        maxLeads: intOrNull(raw.maxLeads),
        maxResults: intOrNull(raw.maxResults),
        maxCredits: intOrNull(raw.maxCredits),
      },
      formatId: intOrNull(raw.formatId),
      fileType: fileType === "csv" || fileType === "json" || fileType === "xlsx" ? fileType : null,
      inline: raw.inline !== false,
    },
  };
}

/** The stored job input, checked (queued jobs outlive code): throws when it is not one. */
export function parseExportJobInput(raw: unknown): ExportJobInput {
  const input = raw as Partial<ExportJobInput> | null;
  if (
    !input ||
    typeof input !== "object" ||
    typeof input.format !== "object" ||
    input.format === null ||
    typeof input.caps !== "object" ||
    input.caps === null ||
    typeof input.inline !== "boolean" ||
    typeof input.publicBaseUrl !== "string"
  ) {
    throw new Error("not an export job input");
  }
  const caps: ExportCaps = {
    maxLeads: intOrNull(input.caps.maxLeads),
    maxResults: intOrNull(input.caps.maxResults),
    maxCredits: intOrNull(input.caps.maxCredits),
  };
  parseSearchFilters(input.filters, "body");
  return { ...(input as ExportJobInput), caps };
}

/** The stored form of parsed filters. */
export function storedFilters(filters: SearchFilters): Record<string, unknown> {
  return searchFiltersToJson(filters);
}
