import type { Response } from "express";
import { pipeline } from "node:stream/promises";
import type { FileStorage } from "../storage/file-storage.js";
import { send } from "../http/types.js";
import { jobErrors } from "./errors.js";
import { acceptedHeaders, toJobAccepted } from "./presenter.js";
import type { Job } from "./repository.js";

/** `attachment; filename="..."` with a plain-ASCII name and the exact name in `filename*`. */
export function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]/g, "_").replace(/["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

/** How an answer is being given. */
export interface AnswerOptions {
  /** `Preference-Applied`, if any preference was honoured. */
  preferenceApplied: string | undefined;
  /** Adds `X-SVC-Job-Status` (polls and replays); absent on an answer within the request's wait. */
  withJobStatus: boolean;
}

/** Writes the 202 answer of a running job. */
export function writeAccepted(res: Response, job: Job, preferenceApplied: string | undefined): void {
  res.set(acceptedHeaders(job, preferenceApplied));
  send(res, "getJob", 202, toJobAccepted(job));
}

/**
 * Writes a finished job's stored answer exactly as it was given: status, headers and body (JSON,
 * or the file streamed from storage), plus `X-SVC-Job-Id` and `Cache-Control: no-store`.
 * An expired job, or a file no longer in storage, is 410 `job_result_expired`.
 */
export async function writeStoredAnswer(
  res: Response,
  storage: FileStorage,
  job: Job,
  options: AnswerOptions,
): Promise<void> {
  const answer = job.answer;
  if (job.status === "expired" || job.status === "running" || !answer) throw jobErrors.resultExpired();
  const headers: Record<string, string> = {
    ...(answer.headers ?? {}),
    "X-SVC-Job-Id": job.id,
    "Cache-Control": "no-store",
  };
  if (options.withJobStatus) headers["X-SVC-Job-Status"] = job.status;
  if (options.preferenceApplied) headers["Preference-Applied"] = options.preferenceApplied;
  if ("file" in answer) {
    const size = await storage.size(answer.file.storageKey);
    const stream = size === undefined ? undefined : await storage.get(answer.file.storageKey);
    if (!stream || size === undefined) throw jobErrors.resultExpired();
    res.status(answer.status).set({
      ...headers,
      "Content-Type": answer.file.contentType,
      "Content-Disposition": contentDisposition(answer.file.fileName),
      "Content-Length": String(size),
    });
    await pipeline(stream, res);
    return;
  }
  // The stored body was built by the job kind through its own typed presenter; it is replayed
  // as it was (the contract lists every stored answer of getJob and of the long-running calls).
  res.status(answer.status).set(headers).json(answer.body);
}
