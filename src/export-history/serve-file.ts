import type { Response } from "express";
import { pipeline } from "node:stream/promises";
import { fileUnavailable } from "../export-files/errors.js";
import type { ExportAnswerFile } from "../export-files/store.js";
import type { FileStorage } from "../storage/file-storage.js";
import type { FileToServe } from "./service.js";

/**
 * Streams a stored file as the answer: 200 with its `Content-Type`, `Content-Length` and
 * `Content-Disposition: attachment; filename="..."`. Other headers (rate limits, job headers) are
 * the caller's to set first.
 */
export async function serveFile(res: Response, file: FileToServe): Promise<void> {
  res.status(200);
  res.setHeader("Content-Type", file.contentType);
  res.setHeader("Content-Length", String(file.size));
  res.setHeader("Content-Disposition", `attachment; filename="${file.fileName.replace(/["\\\r\n]/g, "_")}"`);
  res.setHeader("Cache-Control", "private, no-store");
  await pipeline(file.body, res);
}

/**
 * The answer file of an export (`writeExportFiles(...).answer`: the single file or the ZIP), ready
 * for serveFile; 410 `file_unavailable` when it is no longer stored.
 */
export async function openAnswerFile(storage: FileStorage, answer: ExportAnswerFile): Promise<FileToServe> {
  const size = await storage.size(answer.storageKey);
  const body = size === undefined ? undefined : await storage.get(answer.storageKey);
  if (size === undefined || !body) throw fileUnavailable("missing");
  return { fileName: answer.fileName, contentType: answer.contentType, size, body };
}
