import { Router } from "express";
import { authOf, type AppContext } from "../http/context.js";
import { send, type JsonRequest } from "../http/types.js";
import { toFilterPresetBody } from "./presenter.js";
import { createFilterPreset, deleteFilterPreset, listFilterPresets } from "./service.js";

/** GET/POST /filter-presets and DELETE /filter-presets/{id}. */
export function filterPresetRoutes(ctx: AppContext): Router {
  const router = Router();

  router.get("/api/v1/filter-presets", async (_req, res) => {
    const { accountId } = authOf(res);
    const presets = await listFilterPresets(ctx.db, accountId);
    send(res, "listFilterPresets", 200, { data: presets.map(toFilterPresetBody) });
  });

  router.post("/api/v1/filter-presets", async (req, res) => {
    const { accountId } = authOf(res);
    const preset = await createFilterPreset(ctx.db, accountId, req.body as JsonRequest<"createFilterPreset">);
    send(res, "createFilterPreset", 201, { data: toFilterPresetBody(preset) });
  });

  router.delete("/api/v1/filter-presets/:id", async (req, res) => {
    const { accountId } = authOf(res);
    await deleteFilterPreset(ctx.db, accountId, Number(req.params.id));
    send(res, "deleteFilterPreset", 200, { data: { message: "Filter preset deleted." } });
  });

  return router;
}
