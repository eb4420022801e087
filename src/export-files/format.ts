import { LEAD_FIELDS } from "../leads/fields.js";

/** File types an export can be written as. */
export type ExportFileType = "csv" | "json" | "xlsx";

/** How a large export is cut into several files. */
export type SplitMode = "max_rows" | "equal_parts" | "parts_max_rows";

/** One column of an export: a lead field, or an empty spacer column. */
export interface FieldMapping {
  /** camelCase lead field name or database-style alias (`wCompanyName`); "" for a spacer. */
  sourceField: string;
  /** Column header; the key of the value in a JSON file. */
  exportName: string;
  type: "field" | "spacer";
}

/**
 * What the file writers need to know of an export format: a saved format (see
 * src/export-formats) or the built-in default. `name` is null for the built-in default.
 */
export interface FileFormat {
  name: string | null;
  fileType: ExportFileType;
  startRow: number;
  fieldMappings: FieldMapping[];
  includeHeaders: boolean;
  splitFiles: boolean;
  splitMode: SplitMode | null;
  maxRowsPerFile: number | null;
  numberOfParts: number | null;
  includeTotal: boolean;
}

/**
 * The default columns (an export without a format, or with an unknown one): the fields of the
 * catalogue marked `defaultExport` (the lead's identity, contact details, location, category and
 * buying signals), in catalogue order, headed by their camelCase field names.
 */
export const DEFAULT_COLUMNS: readonly string[] = LEAD_FIELDS.filter((field) => field.defaultExport).map(
  (field) => field.name,
);

/** The built-in format: one CSV file with the default columns and a header row. */
export function defaultFileFormat(fileType: ExportFileType = "csv"): FileFormat {
  return {
    name: null,
    fileType,
    startRow: 1,
    fieldMappings: DEFAULT_COLUMNS.map((field) => ({ sourceField: field, exportName: field, type: "field" })),
    includeHeaders: true,
    splitFiles: false,
    splitMode: null,
    maxRowsPerFile: null,
    numberOfParts: null,
    includeTotal: false,
  };
}

/** The format with another file type (the export request's `fileType` override). */
export function withFileType(format: FileFormat, fileType: ExportFileType | undefined): FileFormat {
  return fileType && fileType !== format.fileType ? { ...format, fileType } : format;
}

/** MIME type of each file type (and of the ZIP of a split export). */
export const CONTENT_TYPES = {
  csv: "text/csv",
  json: "application/json",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  zip: "application/zip",
} as const;

/** The MIME type of an export file or of the ZIP of a split export. */
export type ExportContentType = (typeof CONTENT_TYPES)[keyof typeof CONTENT_TYPES];
