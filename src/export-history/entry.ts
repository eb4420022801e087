import type { ExportFileType } from "../export-files/format.js";

/** Days an exported file stays downloadable. */
export const FILE_LIFETIME_DAYS = 90;

/** The channel that produced an exported file. */
export type ExportMethod = "dashboard" | "api" | "email_schedule";

/** One exported file (domain shape). */
export interface ExportHistoryEntry {
  id: number;
  accountId: number;
  exportId: string;
  fileName: string;
  fileType: ExportFileType;
  leadCount: number;
  fileSize: number;
  formatName: string | null;
  databaseType: string;
  exportMethod: ExportMethod;
  partNumber: number | null;
  isTotal: boolean;
  storageKey: string;
  /** The export's search parameters (canonical body form); null when not written from a search. */
  filters: Record<string, unknown> | null;
  fileDeletedAt: Date | null;
  createdAt: Date;
  expiresAt: Date;
}

/** Why a file cannot be downloaded now, or null when it can. */
export type Unavailability = "expired" | "missing" | null;

/**
 * Whether the entry's file can be served at `now`: past `expiresAt` (or removed by the cleanup)
 * is `expired`; not in storage is `missing`.
 */
export function unavailability(
  entry: ExportHistoryEntry,
  now: Date,
  storedSize: number | undefined,
): Unavailability {
  if (entry.fileDeletedAt !== null || entry.expiresAt.getTime() <= now.getTime()) return "expired";
  if (storedSize === undefined) return "missing";
  return null;
}
