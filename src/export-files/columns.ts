import { resolveLeadField, type LeadField } from "../leads/fields.js";
import type { ExportFileType, FileFormat } from "./format.js";

/** How the writers treat a column's values: numbers and booleans stay typed (never neutralised). */
export type ColumnKind = "number" | "boolean" | "text";

/** One column of a file: its header, the lead field it reads (null for a spacer) and its kind. */
export interface Column {
  header: string;
  field: LeadField | null;
  kind: ColumnKind;
}

/**
 * How the values of an export row are encoded:
 * - `text` (CSV, XLSX): the value as plain text (lists joined with `; `, timestamps ISO 8601,
 *   objects as JSON text, numbers and booleans as their literal);
 * - `json` (JSON files): the value as JSON text (lists stay arrays).
 */
export type CellEncoding = "text" | "json";

/**
 * One lead as the writers take it: one encoded value per column, in column order; null for a
 * spacer or a missing value. The export reads these straight from the database
 * (src/exports/job/cell-sql.ts); the tests build them from a Lead object (test/helpers/export-rows.ts).
 */
export type ExportRow = readonly (string | null)[];

/** The encoding a file type's writer reads. */
export function encodingOf(fileType: ExportFileType): CellEncoding {
  return fileType === "json" ? "json" : "text";
}

function kindOf(field: LeadField | null): ColumnKind {
  switch (field?.type) {
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    default:
      return "text";
  }
}

/**
 * The columns of a format, in order. Aliases (`wCompanyName`) resolve to the field; a name that no
 * longer resolves (never accepted on save) gives an empty column.
 */
export function columnsOf(format: FileFormat): Column[] {
  return format.fieldMappings.map((mapping) => {
    const field = mapping.type === "spacer" ? null : (resolveLeadField(mapping.sourceField) ?? null);
    return { header: mapping.exportName, field, kind: kindOf(field) };
  });
}
