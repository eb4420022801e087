import type { JsonBody } from "../http/contract.js";
import type { ExportHistoryEntry } from "./entry.js";
import type { ListedEntry } from "./service.js";
import { LINK_LIFETIME_MS } from "./signed-links.js";

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
    filters: entry.filters as ExportHistoryEntryBody["filters"],
    createdAt: entry.createdAt.toISOString(),
    expiresAt: entry.expiresAt.toISOString(),
    downloadAvailable: unavailableReason === null,
    unavailableReason,
  };
}

export type FileDownloadLinkBody = JsonBody<"getExportFileDownloadUrl", 200>["data"];

/** The answer of `GET /export-history/{id}/download-url`: the signed link and the file's facts. */
export function toFileDownloadLink(
  link: { entry: ExportHistoryEntry; url: string; expiresAt: Date },
  now: Date,
): FileDownloadLinkBody {
  const { entry } = link;
  return {
    downloadUrl: link.url,
    // The link's expiry is kept in whole seconds; counted up, a fresh link says 900.
    expiresInSeconds: Math.min(
      LINK_LIFETIME_MS / 1000,
      Math.max(0, Math.ceil((link.expiresAt.getTime() - now.getTime()) / 1000)),
    ),
    fileName: entry.fileName,
    fileType: entry.fileType,
    fileSize: entry.fileSize,
    leadCount: entry.leadCount,
    fileExpiresAt: entry.expiresAt.toISOString(),
    url: link.url,
    expiresAt: link.expiresAt.toISOString(),
  };
}
