import type { JsonBody } from "../http/contract.js";
import type { ListedEntry } from "./service.js";

export type ExportHistoryEntryBody = JsonBody<"listExportHistory", 200>["data"][number];

/** The API's export history entry. */
export function toExportHistoryEntryBody({ entry, unavailableReason }: ListedEntry): ExportHistoryEntryBody {
  return {
    id: entry.id,
    fileName: entry.fileName,
    fileType: entry.fileType,
    leadCount: entry.leadCount,
    fileSize: entry.fileSize,
    formatName: entry.formatName,
    databaseType: entry.databaseType as ExportHistoryEntryBody["databaseType"],
    exportMethod: entry.exportMethod,
    partNumber: entry.partNumber,
    isTotal: entry.isTotal,
    createdAt: entry.createdAt.toISOString(),
    expiresAt: entry.expiresAt.toISOString(),
    downloadAvailable: unavailableReason === null,
    unavailableReason,
  };
}
