import type { Task } from "graphile-worker";
import type { Db } from "../../db/database.js";
import { sendQueuedLiveUpdates } from "./live-updates.js";

/** The graphile-worker task that sends live updates a stopped or crashed import left queued. */
export const LIVE_UPDATES_SWEEP_TASK = "leads__live_updates_sweep";

/** Every minute, one run at a time. */
export const LIVE_UPDATES_CRONTAB = `* * * * * ${LIVE_UPDATES_SWEEP_TASK} ?max=1\n`;

/**
 * How long a queued batch is left to the import that wrote it (which sends its own batches once
 * it has written them all) before the sweep sends it.
 */
export const LIVE_UPDATES_GRACE_MS = 5 * 60_000;

/** The sweep: sends every batch queued more than `LIVE_UPDATES_GRACE_MS` ago. */
export function liveUpdatesSweepTask(db: Db, graceMs = LIVE_UPDATES_GRACE_MS): Task {
  return async () => {
    await sendQueuedLiveUpdates(db, { queuedBefore: new Date(Date.now() - graceMs) });
  };
}
