import type { Task } from "graphile-worker";
import type { Logger } from "pino";
import { claimDueRun, findDueSchedules, releaseClaim } from "../repository.js";
import { RUN_LEASE_MS } from "../schedule.js";
import { sendSchedule, type SendDeps } from "./send.js";

/** The graphile-worker task that runs the due schedules. */
export const RUN_DUE_TASK = "email_schedules__run_due";
/** Every 5 minutes (a schedule runs at most 5 minutes after it is due). */
export const EMAIL_SCHEDULES_CRONTAB = `*/5 * * * * ${RUN_DUE_TASK}\n`;

/** Due schedules read per pass. */
const DUE_BATCH = 100;
/** Passes per task run (later ones wait for the next tick). */
const MAX_PASSES = 20;
/** Schedules one worker sends at the same time. */
const SEND_CONCURRENCY = 4;

/** What the runner needs. */
export interface RunnerDeps extends SendDeps {
  logger: Logger;
}

/**
 * Runs every due schedule once: each is claimed first (one worker per run; see claimDueRun), then
 * sent (sendSchedule). A failed send releases its claim, so the next tick tries again. Answers how
 * many runs committed.
 */
export async function runDueSchedules(deps: RunnerDeps): Promise<number> {
  let ran = 0;
  const failed = new Set<number>();
  for (let pass = 0; pass < MAX_PASSES; pass += 1) {
    const due = (await findDueSchedules(deps.db, new Date(), DUE_BATCH)).filter((s) => !failed.has(s.id));
    if (due.length === 0) break;
    let claimed = 0;
    const queue = [...due];
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const claim = await claimDueRun(deps.db, next.id, new Date(), RUN_LEASE_MS);
        if (!claim) continue;
        claimed += 1;
        try {
          if (await sendSchedule(deps, next.accountId, next.id, { kind: "regular", claim })) ran += 1;
        } catch (err) {
          failed.add(next.id);
          deps.logger.error({ err, scheduleId: next.id }, "e-mail schedule run failed; retried next tick");
        } finally {
          // A committed run released it already; an abandoned or failed one releases it here.
          await releaseClaim(deps.db, next.id, claim).catch(() => undefined);
        }
      }
    };
    await Promise.all(Array.from({ length: SEND_CONCURRENCY }, worker));
    if (claimed === 0) break;
  }
  return ran;
}

/** `email_schedules__run_due`: the cron task. */
export function runDueTask(deps: RunnerDeps): Task {
  return async () => {
    await runDueSchedules(deps);
  };
}
