import type { Db } from "../db/database.js";
import type { Handlers, JsonBody } from "../http/contract.js";
import { getDatabaseSettings, switchDatabase, type DatabaseSettings } from "./service.js";

type SettingsBody = JsonBody<"getDatabaseSettings", 200>["data"];

function toSettings(settings: DatabaseSettings): SettingsBody {
  return {
    currentDatabase: settings.currentDatabase,
    canSwitch: settings.canSwitch,
    daysRemaining: settings.daysRemaining,
    lastSwitchedAt: settings.lastSwitchedAt?.toISOString() ?? null,
  };
}

/** `GET /settings/database` and `POST /settings/switch-database`. */
export function settingsHandlers({ db }: { db: Db }): Handlers<"getDatabaseSettings" | "switchDatabase"> {
  return {
    async getDatabaseSettings({ caller }) {
      return { status: 200, body: { data: toSettings(await getDatabaseSettings(db, caller.accountId)) } };
    },
    async switchDatabase({ caller, body }) {
      const result = await switchDatabase(db, caller.accountId, body.smbType);
      return {
        status: 200,
        body: {
          data: {
            ...toSettings(result.settings),
            pausedSchedules: result.pausedSchedules,
            message: result.message,
          },
        },
      };
    },
  };
}
