import type { Task } from "graphile-worker";
import type { Db } from "../../db/database.js";
import type { FileStorage } from "../../storage/file-storage.js";
import { deleteExpiredExportFiles } from "../service.js";

/** Crontab line: once an hour, remove the bytes of export files past their 90 days. */
export const EXPORT_FILES_CLEANUP_CRONTAB = "23 * * * * export_files__cleanup\n";

/**
 * Removes the stored bytes of expired export files (entries stay listed as expired). Idempotent:
 * a file already removed is skipped; downloads refuse after `expiresAt` whether or not it ran.
 */
export function exportFilesCleanup(deps: { db: Db; storage: FileStorage }): Task {
  return async (_payload, helpers) => {
    const removed = await deleteExpiredExportFiles(deps.db, deps.storage);
    if (removed > 0) helpers.logger.info(`removed ${removed} expired export file(s)`);
  };
}
