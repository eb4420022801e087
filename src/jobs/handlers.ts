import type { Handlers } from "../http/contract.js";
import { jobErrors } from "./errors.js";
import type { LongRunningDeps } from "./long-running.js";
import { parsePrefer } from "./prefer.js";
import { acceptedAnswer, storedAnswer } from "./respond.js";
import { findJobForPoll } from "./service.js";
import { MAX_POLL_WAIT_SECONDS } from "./settings.js";
import { waitForJob } from "./wait.js";

/** `GET /jobs/{jobId}`: the job's 202 while it runs, then its stored answer, 410 after retention. */
export function jobHandlers(deps: LongRunningDeps): Handlers<"getJob"> {
  return {
    async getJob({ caller, params, http }) {
      // Only `wait=N` applies to a poll (`respond-async` is what a poll does anyway).
      const preference = parsePrefer(http.rawHeaders.prefer, MAX_POLL_WAIT_SECONDS);
      const applied = preference.waitSeconds !== undefined ? `wait=${preference.waitSeconds}` : undefined;
      let job = await findJobForPoll(deps.db, params.jobId, caller.accountId);
      if (!job) throw jobErrors.notFound();
      if (job.status === "expired") throw jobErrors.resultExpired();
      if (job.status === "running" && preference.waitSeconds) {
        const until = http.arrivedAt + preference.waitSeconds * 1000;
        const { notifier, settings } = deps.jobs;
        job = await waitForJob(deps.db, notifier, job, until, settings.recheckMs, http.signal);
      }
      if (job.status === "running") return acceptedAnswer(job, applied);
      return storedAnswer(deps.storage, job, { preferenceApplied: applied, withJobStatus: true });
    },
  };
}
