import { Router } from "express";
import { authOf, type AppContext } from "../http/context.js";
import { jobErrors } from "./errors.js";
import { parsePrefer } from "./prefer.js";
import { writeAccepted, writeStoredAnswer } from "./respond.js";
import { findJobForPoll } from "./service.js";
import { MAX_POLL_WAIT_SECONDS } from "./settings.js";
import { waitForJob } from "./wait.js";

/** GET /jobs/{jobId}: the job's 202 while it runs, then its stored answer, 410 after retention. */
export function jobRoutes(ctx: AppContext): Router {
  const router = Router();

  router.get("/api/v1/jobs/:jobId", async (req, res) => {
    const arrivedAt = typeof res.locals.arrivedAt === "number" ? res.locals.arrivedAt : Date.now();
    const { accountId } = authOf(res);
    // Only `wait=N` applies to a poll (`respond-async` is what a poll does anyway).
    const preference = parsePrefer(req.headers.prefer, MAX_POLL_WAIT_SECONDS);
    const applied = preference.waitSeconds !== undefined ? `wait=${preference.waitSeconds}` : undefined;
    let job = await findJobForPoll(ctx.db, req.params.jobId, accountId);
    if (!job) throw jobErrors.notFound();
    if (job.status === "expired") throw jobErrors.resultExpired();
    if (job.status === "running" && preference.waitSeconds) {
      const gone = new AbortController();
      res.once("close", () => gone.abort());
      const until = arrivedAt + preference.waitSeconds * 1000;
      job = await waitForJob(ctx.db, ctx.jobs.notifier, job, until, ctx.jobs.settings.recheckMs, gone.signal);
    }
    if (job.status === "running") {
      writeAccepted(res, job, applied);
      return;
    }
    await writeStoredAnswer(res, ctx.storage, job, {
      preferenceApplied: applied,
      withJobStatus: true,
    });
  });

  return router;
}
