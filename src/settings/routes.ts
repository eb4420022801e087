import { Router } from "express";
import { authOf, type AppContext } from "../http/context.js";
import { send, type JsonRequest, type JsonResponse } from "../http/types.js";
import { getDatabaseSettings, switchDatabase, type DatabaseSettings } from "./service.js";

type SettingsBody = JsonResponse<"getDatabaseSettings", 200>["data"];

function toSettings(settings: DatabaseSettings): SettingsBody {
  return {
    currentDatabase: settings.currentDatabase,
    canSwitch: settings.canSwitch,
    daysRemaining: settings.daysRemaining,
    lastSwitchedAt: settings.lastSwitchedAt?.toISOString() ?? null,
  };
}

/** GET /settings/database and POST /settings/switch-database. */
export function settingsRoutes(ctx: AppContext): Router {
  const router = Router();

  router.get("/api/v1/settings/database", async (_req, res) => {
    const { accountId } = authOf(res);
    send(res, "getDatabaseSettings", 200, { data: toSettings(await getDatabaseSettings(ctx.db, accountId)) });
  });

  router.post("/api/v1/settings/switch-database", async (req, res) => {
    const { accountId } = authOf(res);
    const body = req.body as JsonRequest<"switchDatabase">;
    const result = await switchDatabase(ctx.db, accountId, body.smbType);
    send(res, "switchDatabase", 200, {
      data: {
        ...toSettings(result.settings),
        pausedSchedules: result.pausedSchedules,
        message: result.message,
      },
    });
  });

  return router;
}
