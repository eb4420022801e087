import { ApiError } from "../http/errors.js";

/** Why an exported file cannot be served (the `reason` of its 410). */
export type FileGoneReason = "expired" | "not_stored" | "link_expired";

const MESSAGES: Record<FileGoneReason, string> = {
  expired: "This file has expired (exported files are kept 90 days).",
  not_stored: "This file is no longer available.",
  link_expired: "This download link has expired (links are valid 15 minutes); request a new one.",
};

/** 410 `file_unavailable` with its `reason` (openapi.yaml, ExportFileUnavailableError). */
class FileUnavailableError extends ApiError {
  constructor(readonly reason: FileGoneReason) {
    super(410, "file_unavailable", MESSAGES[reason]);
  }

  override body(): Record<string, unknown> {
    return { ...super.body(), reason: this.reason };
  }
}

/**
 * 410 `file_unavailable`: an exported file past its expiry or no longer stored, or an expired link
 * (`missing` is `not_stored`, the name of entry.ts's Unavailability).
 */
export function fileUnavailable(reason: FileGoneReason | "missing"): ApiError {
  return new FileUnavailableError(reason === "missing" ? "not_stored" : reason);
}
