import type { Db } from "../../db/database.js";
import type { Handlers } from "../../http/contract.js";
import { toAutoRefineListBody } from "./presenter.js";
import { autoRefineStatus, disableAutoRefine, enableAutoRefine } from "./service.js";

/** `POST /ai/auto-refine/enable`, `POST /ai/auto-refine/disable`, `GET /ai/auto-refine/status`. */
export function autoRefineHandlers({
  db,
}: {
  db: Db;
}): Handlers<"enableAutoRefine" | "disableAutoRefine" | "getAutoRefineStatus"> {
  return {
    async enableAutoRefine({ caller, body }) {
      const change = await enableAutoRefine(db, caller.accountId, body.listId);
      return {
        status: 200,
        body: {
          data: {
            message: change.message,
            running: change.running,
            lists: change.lists.map(toAutoRefineListBody),
          },
        },
      };
    },
    async disableAutoRefine({ caller, body }) {
      const change = await disableAutoRefine(db, caller.accountId, body.listId);
      return {
        status: 200,
        body: {
          data: {
            message: change.message,
            running: change.running,
            lists: change.lists.map(toAutoRefineListBody),
          },
        },
      };
    },
    async getAutoRefineStatus({ caller, query }) {
      const lists = await autoRefineStatus(db, caller.accountId, query.listId);
      return { status: 200, body: { data: lists.map(toAutoRefineListBody) } };
    },
  };
}
