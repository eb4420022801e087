import { ApiError } from "../http/errors.js";

/** 410 `file_unavailable`: an exported file past its expiry or no longer stored. */
export function fileUnavailable(reason: "expired" | "missing" | "link_expired"): ApiError {
  const message = {
    expired: "This file has expired (exported files are kept 90 days).",
    missing: "This file is no longer available.",
    link_expired: "This download link has expired (links are valid 15 minutes); request a new one.",
  }[reason];
  return new ApiError(410, "file_unavailable", message);
}
