import type { FileStorage } from "../storage/file-storage.js";
import type { JobAnswer } from "./answer.js";

/**
 * JSON bodies of at least this many characters are kept in storage rather than in the jobs table
 * (docs/performance.md, 2026-11-24 "Large job answers"): a refresh of 5,000 entries answers 8 MB,
 * which as `jsonb` took 0.5 s to store and 0.3 s to read back and parse, against 0.02 s as a file
 * that is streamed back as it was written.
 */
export const LARGE_BODY_BYTES = 256 * 1024;

/** The storage folder of a job's large bodies (one per attempt that wrote one). */
export function jobFilesPrefix(jobId: string): string {
  return `jobs/${jobId}/`;
}

/** The storage key of a job attempt's large body. */
export function bodyFileKey(jobId: string, attempt: number): string {
  return `${jobFilesPrefix(jobId)}answer-${attempt}.json`;
}

/**
 * The answer to store: a JSON body of at least `limit` characters is written to storage (under the
 * job's id and attempt) and replaced by a `bodyFile`; any other answer is stored as it is.
 */
export async function keepLargeBody(
  storage: FileStorage,
  job: { id: string; attempt: number },
  answer: JobAnswer,
  limit = LARGE_BODY_BYTES,
): Promise<JobAnswer> {
  if (!("body" in answer)) return answer;
  const text = JSON.stringify(answer.body);
  if (text === undefined || text.length < limit) return answer;
  const storageKey = bodyFileKey(job.id, job.attempt);
  await storage.put(storageKey, Buffer.from(text));
  return { status: answer.status, headers: answer.headers ?? {}, bodyFile: { storageKey } };
}

/** The file an answer keeps in storage and owns (deleted with the answer), if any. */
export function ownedFileOf(answer: JobAnswer | undefined): string | undefined {
  if (!answer) return undefined;
  if ("bodyFile" in answer) return answer.bodyFile.storageKey;
  if ("file" in answer && !answer.file.shared) return answer.file.storageKey;
  return undefined;
}
