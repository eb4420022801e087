import type { Db } from "../db/database.js";
import type { JobNotifier } from "./notifier.js";
import type { Job } from "./repository.js";
import { readJob, reloadJob } from "./service.js";

/**
 * Waits until the job has finished or `until` (ms since epoch) has come, whichever is first, and
 * returns the job as it then is. Woken by the "finished" notification; re-reads the row every
 * `recheckMs` in case a notification was missed. Stops early when `signal` aborts (client gone).
 */
export async function waitForJob(
  db: Db,
  notifier: JobNotifier,
  job: Job,
  until: number,
  recheckMs: number,
  signal?: AbortSignal,
): Promise<Job> {
  if (job.status !== "running" || Date.now() >= until) return job;
  await notifier.start();
  let current = job;
  while (current.status === "running" && Date.now() < until && !signal?.aborted) {
    const subscription = notifier.subscribe(job.id);
    try {
      current = (await readJob(db, job.id)) ?? current;
      if (current.status !== "running") break;
      const delay = Math.max(0, Math.min(until - Date.now(), recheckMs));
      let timer: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      await Promise.race([
        subscription.finished,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, delay);
          onAbort = resolve;
          signal?.addEventListener("abort", onAbort, { once: true });
        }),
      ]);
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener("abort", onAbort);
    } finally {
      subscription.cancel();
    }
  }
  return (await reloadJob(db, job.id)) ?? current;
}
