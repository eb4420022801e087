import type { Task } from "graphile-worker";
import type { Db } from "../../db/database.js";
import { mailOwnerSummary } from "../owner-notices.js";

/**
 * `integrations__owner_summary` (payload `{accountId}`): mails one summary of the account's
 * unmailed change notices and marks them mailed, in one transaction. Idempotent; a payload of
 * another shape (an old job) is dropped.
 */
export function integrationsOwnerSummary(deps: { db: Db }): Task {
  return async (payload, helpers) => {
    const accountId = (payload as { accountId?: unknown } | null)?.accountId;
    if (typeof accountId !== "number" || !Number.isInteger(accountId)) {
      helpers.logger.error("integrations__owner_summary: payload without an integer accountId; dropped");
      return;
    }
    const mailed = await deps.db.transaction().execute((trx) => mailOwnerSummary(trx, accountId));
    if (mailed > 0) helpers.logger.info(`mailed a summary of ${mailed} integration change(s)`);
  };
}
