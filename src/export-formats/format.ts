import type { ExportFileType, FieldMapping, FileFormat, SplitMode } from "../export-files/format.js";

/** A saved export format (domain shape). */
export interface ExportFormat extends FileFormat {
  id: number;
  accountId: number;
  name: string;
  isDefault: boolean;
  databaseType: string;
  combinedAssigneeColumnName: string | null;
  combinedFileNameColumnName: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The writable fields of a format, all set (a create with defaults, or an update merged). */
export interface ExportFormatFields {
  name: string;
  fileType: ExportFileType;
  startRow: number;
  fieldMappings: FieldMapping[];
  splitFiles: boolean;
  splitMode: SplitMode | null;
  maxRowsPerFile: number | null;
  numberOfParts: number | null;
  includeTotal: boolean;
  includeHeaders: boolean;
  combinedAssigneeColumnName: string | null;
  combinedFileNameColumnName: string | null;
}

/** The writable field names, in the order the API lists them. */
export const WRITABLE_FIELDS = [
  "name",
  "fileType",
  "startRow",
  "fieldMappings",
  "splitFiles",
  "splitMode",
  "maxRowsPerFile",
  "numberOfParts",
  "includeTotal",
  "includeHeaders",
  "combinedAssigneeColumnName",
  "combinedFileNameColumnName",
] as const satisfies readonly (keyof ExportFormatFields)[];

/** Defaults of a new format's optional fields. */
export const CREATE_DEFAULTS: Omit<ExportFormatFields, "name" | "fileType" | "fieldMappings"> = {
  startRow: 1,
  splitFiles: false,
  splitMode: null,
  maxRowsPerFile: null,
  numberOfParts: null,
  includeTotal: false,
  includeHeaders: true,
  combinedAssigneeColumnName: null,
  combinedFileNameColumnName: null,
};

/** What the file writers use of a saved format (or the built-in default when null). */
export function toFileFormat(format: ExportFormat): FileFormat {
  return {
    name: format.name,
    fileType: format.fileType,
    startRow: format.startRow,
    fieldMappings: format.fieldMappings,
    includeHeaders: format.includeHeaders,
    splitFiles: format.splitFiles,
    splitMode: format.splitMode,
    maxRowsPerFile: format.maxRowsPerFile,
    numberOfParts: format.numberOfParts,
    includeTotal: format.includeTotal,
  };
}
