import type { ReplayedAnswer, StoredAnswer } from "../http/contract.js";
import type { FileStorage } from "../storage/file-storage.js";
import { jobErrors } from "./errors.js";
import { composedBodyStream } from "./large-bodies.js";
import { acceptedHeaders, toJobAccepted } from "./presenter.js";
import type { Job } from "./repository.js";

/** How an answer is being given. */
export interface AnswerOptions {
  /** `Preference-Applied`, if any preference was honoured. */
  preferenceApplied: string | undefined;
  /** Adds `X-SVC-Job-Status` (polls and replays); absent on an answer within the request's wait. */
  withJobStatus: boolean;
}

/**
 * An answer of the job protocol. The stored answers were built by the job kind of the request's
 * own operation when it finished (src/jobs/kinds.ts), and the 202 is the `JobAcceptedResponse`
 * every long-running operation and `getJob` declare: this is where they become answers.
 */
function replay(answer: StoredAnswer): ReplayedAnswer {
  return answer as ReplayedAnswer;
}

/** The 202 answer of a running job. */
export function acceptedAnswer(job: Job, preferenceApplied: string | undefined): ReplayedAnswer {
  return replay({ status: 202, headers: acceptedHeaders(job, preferenceApplied), body: toJobAccepted(job) });
}

/**
 * A finished job's stored answer exactly as it was given: status, headers and body (JSON, its
 * serialised text kept in storage, or the file opened from storage), plus `X-SVC-Job-Id` and `Cache-Control: no-store`. An expired job,
 * or a file no longer in storage, is 410 `job_result_expired`.
 */
export async function storedAnswer(
  storage: FileStorage,
  job: Job,
  options: AnswerOptions,
): Promise<ReplayedAnswer> {
  const answer = job.answer;
  if (job.status === "expired" || job.status === "running" || !answer) throw jobErrors.resultExpired();
  const headers: Record<string, string> = {
    ...(answer.headers ?? {}),
    "X-SVC-Job-Id": job.id,
    "Cache-Control": "no-store",
  };
  if (options.withJobStatus) headers["X-SVC-Job-Status"] = job.status;
  if (options.preferenceApplied) headers["Preference-Applied"] = options.preferenceApplied;
  if ("body" in answer) return replay({ status: answer.status, headers, body: answer.body });
  if ("bodyFile" in answer) {
    const kept = await storage.open(answer.bodyFile.storageKey);
    if (!kept) throw jobErrors.resultExpired();
    return replay({ status: answer.status, headers, json: { size: kept.size, body: kept.body } });
  }
  if ("composedBody" in answer) {
    const body = await composedBodyStream(storage, answer.composedBody);
    if (!body) throw jobErrors.resultExpired();
    return replay({ status: answer.status, headers, json: { body } });
  }
  const stored = await storage.open(answer.file.storageKey);
  if (!stored) throw jobErrors.resultExpired();
  const { fileName, contentType } = answer.file;
  return replay({ status: answer.status, headers, file: { fileName, contentType, ...stored } });
}
