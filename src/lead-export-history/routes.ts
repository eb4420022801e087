import { Router } from "express";
import { authOf, type AppContext } from "../http/context.js";
import { send } from "../http/types.js";
import { toHistoryEntryBody } from "./presenter.js";
import { listHistory, listHistoryIds, type HistoryQuery } from "./service.js";

/** GET /lead-export-history and GET /lead-export-history/ids (the POSTs are background jobs). */
export function leadExportHistoryRoutes(ctx: AppContext): Router {
  const router = Router();

  router.get("/api/v1/lead-export-history", async (req, res) => {
    const { accountId } = authOf(res);
    // One snapshot of the data for the page and its total.
    const page = await ctx.db
      .transaction()
      .setIsolationLevel("repeatable read")
      .execute((trx) => listHistory(trx, accountId, req.query as HistoryQuery));
    send(res, "listLeadExportHistory", 200, {
      data: page.entries.map(toHistoryEntryBody),
      totalCount: page.totalCount,
      limit: page.limit,
      offset: page.offset,
    });
  });

  router.get("/api/v1/lead-export-history/ids", async (req, res) => {
    const { accountId } = authOf(res);
    const ids = await listHistoryIds(ctx.db, accountId, req.query as HistoryQuery);
    send(res, "listLeadExportHistoryIds", 200, { data: ids, totalCount: ids.length });
  });

  return router;
}
