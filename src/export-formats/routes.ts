import { Router } from "express";
import { authOf, type AppContext } from "../http/context.js";
import { send, type JsonRequest } from "../http/types.js";
import { toExportFormatBody } from "./presenter.js";
import {
  createExportFormat,
  deleteExportFormat,
  getExportFormat,
  listExportFormats,
  setDefaultExportFormat,
  updateExportFormat,
} from "./service.js";

const BASE = "/api/v1/export-formats";

/** CRUD of export formats and `set-default`. */
export function exportFormatRoutes(ctx: AppContext): Router {
  const router = Router();

  router.get(BASE, async (_req, res) => {
    const { accountId } = authOf(res);
    const formats = await listExportFormats(ctx.db, accountId);
    send(res, "listExportFormats", 200, { data: formats.map(toExportFormatBody) });
  });

  router.post(BASE, async (req, res) => {
    const { accountId } = authOf(res);
    const format = await createExportFormat(ctx.db, accountId, req.body as JsonRequest<"createExportFormat">);
    send(res, "createExportFormat", 201, { data: toExportFormatBody(format) });
  });

  router.get(`${BASE}/:id`, async (req, res) => {
    const { accountId } = authOf(res);
    const format = await getExportFormat(ctx.db, accountId, Number(req.params.id));
    send(res, "getExportFormat", 200, { data: toExportFormatBody(format) });
  });

  router.patch(`${BASE}/:id`, async (req, res) => {
    const { accountId } = authOf(res);
    const body = req.body as Record<string, unknown>;
    const format = await updateExportFormat(ctx.db, accountId, Number(req.params.id), body);
    send(res, "updateExportFormat", 200, { data: toExportFormatBody(format) });
  });

  router.delete(`${BASE}/:id`, async (req, res) => {
    const { accountId } = authOf(res);
    await deleteExportFormat(ctx.db, accountId, Number(req.params.id));
    send(res, "deleteExportFormat", 200, { data: { message: "Export format deleted." } });
  });

  router.post(`${BASE}/:id/set-default`, async (req, res) => {
    const { accountId } = authOf(res);
    const format = await setDefaultExportFormat(ctx.db, accountId, Number(req.params.id));
    send(res, "setDefaultExportFormat", 200, { data: toExportFormatBody(format) });
  });

  return router;
}
