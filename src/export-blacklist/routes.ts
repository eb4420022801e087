import { Router } from "express";
import { authOf, type AppContext } from "../http/context.js";
import { send, type JsonRequest } from "../http/types.js";
import { toAddResultBody, toBlacklistEntryBody } from "./presenter.js";
import { addToBlacklist, listBlacklist, removeFromBlacklist } from "./service.js";

/** GET/POST /export-blacklist and DELETE /export-blacklist/{id}. */
export function exportBlacklistRoutes(ctx: AppContext): Router {
  const router = Router();

  router.get("/api/v1/export-blacklist", async (_req, res) => {
    const { accountId } = authOf(res);
    const entries = await listBlacklist(ctx.db, accountId);
    send(res, "listExportBlacklist", 200, { data: entries.map(toBlacklistEntryBody) });
  });

  router.post("/api/v1/export-blacklist", async (req, res) => {
    const { accountId } = authOf(res);
    const body = req.body as JsonRequest<"addExportBlacklistEntries">;
    const result = await addToBlacklist(ctx.db, accountId, body.entries);
    send(res, "addExportBlacklistEntries", 201, { data: toAddResultBody(result) });
  });

  router.delete("/api/v1/export-blacklist/:id", async (req, res) => {
    const { accountId } = authOf(res);
    await removeFromBlacklist(ctx.db, accountId, Number(req.params.id));
    send(res, "deleteExportBlacklistEntry", 200, { data: { message: "Blacklist entry deleted." } });
  });

  return router;
}
