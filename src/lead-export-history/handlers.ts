import type { Db } from "../db/database.js";
import type { Handlers } from "../http/contract.js";
import { toHistoryEntryBody } from "./presenter.js";
import { listHistory, listHistoryIds } from "./service.js";

/** `GET /lead-export-history` and `GET /lead-export-history/ids` (the POSTs are background jobs). */
export function leadExportHistoryHandlers({
  db,
}: {
  db: Db;
}): Handlers<"listLeadExportHistory" | "listLeadExportHistoryIds"> {
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
  };
}
