import type { components } from "../../generated/api.js";
import type { Job } from "./repository.js";
import { POLL_RETRY_AFTER_SECONDS } from "./settings.js";

type JobAccepted = components["schemas"]["JobAccepted"];

const INT32_MAX = 2_147_483_647;

/** The job's status URL, relative to the host (as `statusUrl` and `Location`). */
export function statusUrlOf(jobId: string): string {
  return `/api/v1/jobs/${encodeURIComponent(jobId)}`;
}

/** The 202 body of a running job. */
export function toJobAccepted(job: Job, now = Date.now()): JobAccepted {
  return {
    jobId: job.id,
    status: "running",
    kind: job.kind,
    phase: job.phase,
    progress: {
      done: Math.min(job.progress.done, INT32_MAX),
      total: Math.min(job.progress.total, INT32_MAX),
      label: job.progress.label,
    },
    elapsedMs: Math.min(Math.max(0, now - job.createdAt.getTime()), INT32_MAX),
    statusUrl: statusUrlOf(job.id),
    retryAfterSeconds: POLL_RETRY_AFTER_SECONDS,
    message:
      "The request is still running. Poll statusUrl with any key of this account " +
      "(send Prefer: wait=60 to wait for the answer); it returns the final answer once the job has finished.",
  };
}

/** Headers of a 202 answer. */
export function acceptedHeaders(job: Job, preferenceApplied: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {
    Location: statusUrlOf(job.id),
    "Retry-After": String(POLL_RETRY_AFTER_SECONDS),
    "X-SVC-Job-Id": job.id,
    "X-SVC-Job-Status": "running",
    "Cache-Control": "no-store",
  };
  if (preferenceApplied) headers["Preference-Applied"] = preferenceApplied;
  return headers;
}
