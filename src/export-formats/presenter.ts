import type { JsonBody } from "../http/contract.js";
import type { ExportFormat } from "./format.js";

export type ExportFormatBody = JsonBody<"getExportFormat", 200>["data"];

/** The API's export format. */
export function toExportFormatBody(format: ExportFormat): ExportFormatBody {
  return {
    id: format.id,
    name: format.name,
    fileType: format.fileType,
    startRow: format.startRow,
    fieldMappings: format.fieldMappings.map((m) => ({
      sourceField: m.sourceField,
      exportName: m.exportName,
      type: m.type,
    })),
    isDefault: format.isDefault,
    splitFiles: format.splitFiles,
    splitMode: format.splitMode,
    maxRowsPerFile: format.maxRowsPerFile,
    numberOfParts: format.numberOfParts,
    includeTotal: format.includeTotal,
    includeHeaders: format.includeHeaders,
    databaseType: format.databaseType as ExportFormatBody["databaseType"],
    combinedAssigneeColumnName: format.combinedAssigneeColumnName,
    combinedFileNameColumnName: format.combinedFileNameColumnName,
    createdAt: format.createdAt.toISOString(),
    updatedAt: format.updatedAt.toISOString(),
  };
}
