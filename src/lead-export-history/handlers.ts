import type { Db } from "../db/database.js";
import { defaultFileFormat, type FileFormat } from "../export-files/format.js";
import { toFileFormat } from "../export-formats/format.js";
import { resolveExportFormat } from "../export-formats/service.js";
import type { Handlers } from "../http/contract.js";
import { runLongRunning, type LongRunningDeps } from "../jobs/index.js";
import { channelScopedCall } from "../exports/method.js";
import { exportMethodOf } from "../leads/delivery-channel.js";
import { reExportHistoryJob, refreshAndExportHistoryJob, refreshHistoryJob } from "./jobs.js";
import { toHistoryEntryBody } from "./presenter.js";
import { exportableEntries, selectTrackingIds, type EntrySelector } from "./selection.js";
import { listHistory, listHistoryIds } from "./service.js";

/**
 * The file format of a re-export or refresh-and-export: the account's format `formatId`; omitted
 * or unknown (also another account's), a CSV with the default columns.
 */
async function fileFormat(db: Db, accountId: number, formatId: number | undefined): Promise<FileFormat> {
  if (formatId === undefined) return defaultFileFormat();
  const saved = await resolveExportFormat(db, accountId, formatId);
  return saved ? toFileFormat(saved) : defaultFileFormat();
}

/**
 * The lead export history: the two lists, and refresh, re-export and refresh-and-export as
 * background jobs (every input check first: a 4xx answers at once and queues nothing). None of
 * them charges credits.
 */
export function leadExportHistoryHandlers(
  deps: LongRunningDeps & { db: Db },
): Handlers<
  | "listLeadExportHistory"
  | "listLeadExportHistoryIds"
  | "refreshLeadExportHistory"
  | "reExportLeadExportHistory"
  | "refreshAndExportLeadExportHistory"
> {
  const { db } = deps;
  return {
    async listLeadExportHistory({ caller, query }) {
      // One snapshot of the data for the page and its total.
      const page = await db
        .transaction()
        .setIsolationLevel("repeatable read")
        .execute((trx) => listHistory(trx, caller.accountId, query));
      return {
        status: 200,
        body: {
          data: page.entries.map(toHistoryEntryBody),
          totalCount: page.totalCount,
          limit: page.limit,
          offset: page.offset,
        },
      };
    },
    async listLeadExportHistoryIds({ caller, query }) {
      const ids = await listHistoryIds(db, caller.accountId, query);
      return { status: 200, body: { data: ids, totalCount: ids.length } };
    },
    async refreshLeadExportHistory(request) {
      const { accountId } = request.caller;
      const trackingIds = await selectTrackingIds(db, accountId, request.body as EntrySelector);
      return runLongRunning(request, deps, { kind: refreshHistoryJob, accountId, input: { trackingIds } });
    },
    async reExportLeadExportHistory(request) {
      const { accountId } = request.caller;
      const trackingIds = [...new Set(request.body.trackingIds)];
      await exportableEntries(db, accountId, trackingIds);
      const format = await fileFormat(db, accountId, request.body.formatId);
      return runLongRunning(channelScopedCall(request), deps, {
        kind: reExportHistoryJob,
        accountId,
        input: { trackingIds, format, method: exportMethodOf(request.caller) },
      });
    },
    async refreshAndExportLeadExportHistory(request) {
      const { accountId } = request.caller;
      const trackingIds = await selectTrackingIds(db, accountId, request.body as EntrySelector);
      await exportableEntries(db, accountId, trackingIds);
      const format = await fileFormat(db, accountId, request.body.formatId);
      return runLongRunning(channelScopedCall(request), deps, {
        kind: refreshAndExportHistoryJob,
        accountId,
        input: { trackingIds, format, method: exportMethodOf(request.caller) },
      });
    },
  };
}
