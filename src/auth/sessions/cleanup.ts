import { sql } from "kysely";
import type { Task } from "graphile-worker";
import type { Db, DbOrTrx } from "../../db/database.js";

/** Task name and crontab line: once an hour, remove ended sign-in links and sessions. */
export const DASHBOARD_CLEANUP_TASK = "dashboard__cleanup";
export const DASHBOARD_CLEANUP_CRONTAB = `41 * * * * ${DASHBOARD_CLEANUP_TASK}\n`;

/** A day after a link or session ended (used, expired or revoked), its row goes. */
const dayAgo = sql<Date>`now() - interval '1 day'`;

/**
 * Deletes sign-in links used or expired over a day ago and sessions revoked or expired over a
 * day ago (one statement each). A live link (unused, not expired) or session (not revoked, not
 * expired) is never touched: its end is not in the past.
 */
export async function deleteEndedSignIns(db: DbOrTrx): Promise<{ links: number; sessions: number }> {
  const links = await db
    .deleteFrom("dashboard_sign_in_links")
    .where((eb) => eb.or([eb("used_at", "<", dayAgo), eb("expires_at", "<", dayAgo)]))
    .executeTakeFirst();
  const sessions = await db
    .deleteFrom("dashboard_sessions")
    .where((eb) => eb.or([eb("revoked_at", "<", dayAgo), eb("expires_at", "<", dayAgo)]))
    .executeTakeFirst();
  return { links: Number(links.numDeletedRows), sessions: Number(sessions.numDeletedRows) };
}

/** The crontab's task (idempotent: a run that finds nothing deletes nothing). */
export function dashboardCleanup(deps: { db: Db }): Task {
  return async (_payload, helpers) => {
    const removed = await deleteEndedSignIns(deps.db);
    if (removed.links + removed.sessions > 0)
      helpers.logger.info(`removed ${removed.links} sign-in link(s) and ${removed.sessions} session(s)`);
  };
}
