import { Router } from "express";
import { authOf, type AppContext } from "../http/context.js";
import { send, type QueryOf } from "../http/types.js";
import { toExportHistoryEntryBody } from "./presenter.js";
import { createDownloadLink, listExportHistory, openExportFile, openSignedFile } from "./service.js";
import { serveFile } from "./serve-file.js";

/** Export history: the list, downloads, signed links and the signed download itself. */
export function exportHistoryRoutes(ctx: AppContext): Router {
  const router = Router();

  router.get("/api/v1/export-history", async (req, res) => {
    const { accountId } = authOf(res);
    const query = req.query as QueryOf<"listExportHistory">;
    const page = { limit: Number(query.limit ?? 50), offset: Number(query.offset ?? 0) };
    const { entries, totalCount } = await listExportHistory(ctx.db, ctx.storage, accountId, page);
    send(res, "listExportHistory", 200, {
      data: entries.map(toExportHistoryEntryBody),
      totalCount,
      limit: page.limit,
      offset: page.offset,
    });
  });

  router.get("/api/v1/export-history/:id/download", async (req, res) => {
    const { accountId } = authOf(res);
    await serveFile(res, await openExportFile(ctx.db, ctx.storage, accountId, Number(req.params.id)));
  });

  router.get("/api/v1/export-history/:id/download-url", async (req, res) => {
    const { accountId } = authOf(res);
    const signer = { signingSecret: ctx.signingSecret, publicBaseUrl: ctx.config.publicBaseUrl };
    const link = await createDownloadLink(ctx.db, ctx.storage, signer, accountId, Number(req.params.id));
    send(res, "getExportFileDownloadUrl", 200, {
      data: { url: link.url, expiresAt: link.expiresAt.toISOString() },
    });
  });

  // No API key: the signed token is the authorization.
  router.get("/api/v1/files/:token", async (req, res) => {
    await serveFile(res, await openSignedFile(ctx.db, ctx.storage, ctx.signingSecret, req.params.token));
  });

  return router;
}
