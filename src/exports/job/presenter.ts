import { fromTenths } from "../../credits/ledger.js";
import type { ExportHistoryEntry } from "../../export-history/entry.js";
import { downloadLinkFor, type LinkSigner } from "../../export-history/service.js";
import { storedFileText } from "../../jobs/large-bodies.js";
import type { components } from "../../../generated/api.js";
import type { ExportCaps } from "./selection.js";

/** The JSON answer body of an export (openapi.yaml, LeadExportLinks). */
export type LeadExportLinks = components["schemas"]["LeadExportLinks"];

/** What an export did, as its JSON answer tells it. */
export interface ExportOutcome {
  leadCount: number;
  creditsUsedTenths: number;
  creditsRemainingTenths: number;
  /** The cost controls as given (echoed when not null). */
  caps: ExportCaps;
  /** Leads put into the lead reservoir (told with `maxLeads`). */
  overflowCount: number;
}

/** The keyed download path of an export history file (the real service's `downloadUrl`). */
export function keyedDownloadPath(entryId: number): string {
  return `/api/v1/export-history/${entryId}/download`;
}

/**
 * The JSON answer of an export: every file with its export history id, its keyed download path
 * and a signed link, and with `inline` its contents (`data`: text for CSV and JSON, base64 for
 * XLSX, streamed from storage into the stored answer: src/jobs/large-bodies.ts); the count, the
 * charge and the cost controls. `exportId` is the first file's export history id.
 */
export function toLeadExportAnswer(
  signer: LinkSigner,
  entries: ExportHistoryEntry[],
  outcome: ExportOutcome,
  inline: boolean,
  now = new Date(),
): LeadExportLinks {
  const { caps } = outcome;
  return {
    files: entries.map((entry) => {
      const link = downloadLinkFor(signer, entry, now);
      return {
        fileName: entry.fileName,
        fileType: entry.fileType,
        ...(inline
          ? {
              data: storedFileText(
                entry.storageKey,
                entry.fileSize,
                entry.fileType === "xlsx" ? "base64" : "text",
              ),
            }
          : {}),
        size: entry.fileSize,
        leadCount: entry.leadCount,
        exportId: entry.id,
        exportHistoryId: entry.id,
        downloadUrl: keyedDownloadPath(entry.id),
        directDownloadUrl: link.url,
        expiresAt: link.expiresAt.toISOString(),
      };
    }),
    leadCount: outcome.leadCount,
    exportId: entries[0]!.id,
    databaseType: "other",
    creditsUsed: fromTenths(outcome.creditsUsedTenths),
    creditsRemaining: fromTenths(outcome.creditsRemainingTenths),
    ...(caps.maxLeads !== null ? { maxLeads: caps.maxLeads, overflowCount: outcome.overflowCount } : {}),
    ...(caps.maxResults !== null ? { maxResults: caps.maxResults } : {}),
    ...(caps.maxCredits !== null ? { maxCredits: caps.maxCredits } : {}),
  };
}
