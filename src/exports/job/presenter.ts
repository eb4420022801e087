import { fromTenths } from "../../credits/ledger.js";
import type { ExportHistoryEntry } from "../../export-history/entry.js";
import { downloadLinkFor, type LinkSigner } from "../../export-history/service.js";
import type { components } from "../../../generated/api.js";

/** The `inline: false` answer body. */
export type LeadExportLinks = components["schemas"]["LeadExportLinks"];

/** The `inline: false` answer: every file with its export history id and a signed link. */
export function toLeadExportLinks(
  signer: LinkSigner,
  entries: ExportHistoryEntry[],
  outcome: { leadCount: number; creditsUsedTenths: number; creditsRemainingTenths: number },
  now = new Date(),
): LeadExportLinks {
  return {
    files: entries.map((entry) => {
      const link = downloadLinkFor(signer, entry, now);
      return {
        exportHistoryId: entry.id,
        fileName: entry.fileName,
        fileType: entry.fileType,
        leadCount: entry.leadCount,
        downloadUrl: link.url,
        expiresAt: link.expiresAt.toISOString(),
      };
    }),
    leadCount: outcome.leadCount,
    creditsUsed: fromTenths(outcome.creditsUsedTenths),
    creditsRemaining: fromTenths(outcome.creditsRemainingTenths),
  };
}
