import { ApiError } from "../http/errors.js";

/** Retry-After of 429 `job_capacity_busy`, in seconds. */
export const CAPACITY_RETRY_AFTER_SECONDS = 30;

/** The errors of the job protocol. */
export const jobErrors = {
  notFound: () =>
    new ApiError(404, "job_not_found", "No such job (unknown id, or its answer expired over a day ago)."),
  resultExpired: () =>
    new ApiError(
      410,
      "job_result_expired",
      "The job has finished but its answer is no longer kept. Send the request again with a new Idempotency-Key.",
      undefined,
      { "X-SVC-Job-Status": "expired" },
    ),
  keyReused: () =>
    new ApiError(
      409,
      "idempotency_key_reused",
      "This Idempotency-Key was already used with a different request on this endpoint. Use a new key.",
    ),
  capacityBusy: (capacity: number) =>
    new ApiError(
      429,
      "job_capacity_busy",
      `This account already runs ${capacity} jobs of this kind; try again after Retry-After seconds.`,
      undefined,
      { "Retry-After": String(CAPACITY_RETRY_AFTER_SECONDS) },
    ),
};

/** Thrown by JobContext.commit when the job is no longer running (timed out or already done). */
export class JobNoLongerRunning extends Error {
  constructor(readonly jobId: string) {
    super(`job ${jobId} is no longer running`);
    this.name = "JobNoLongerRunning";
  }
}
