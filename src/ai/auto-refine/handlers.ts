import type { Db } from "../../db/database.js";
import type { Handlers } from "../../http/contract.js";
import { toAutoRefineChangeBody, toAutoRefineListBody } from "./presenter.js";
import { autoRefineStatus, disableAutoRefine, enableAutoRefine } from "./service.js";

/** `POST /ai/auto-refine/enable`, `POST /ai/auto-refine/disable`, `GET /ai/auto-refine/status`. */
export function autoRefineHandlers({
  db,
}: {
  db: Db;
}): Handlers<"enableAutoRefine" | "disableAutoRefine" | "getAutoRefineStatus"> {
  return {
    async enableAutoRefine({ caller, body }) {
      return {
        status: 200,
        body: toAutoRefineChangeBody(await enableAutoRefine(db, caller.accountId, body.listId)),
      };
    },
    async disableAutoRefine({ caller, body }) {
      return {
        status: 200,
        body: toAutoRefineChangeBody(await disableAutoRefine(db, caller.accountId, body.listId)),
      };
    },
    async getAutoRefineStatus({ caller, query }) {
      const lists = await autoRefineStatus(db, caller.accountId, query.listId);
      return { status: 200, body: { data: lists.map(toAutoRefineListBody) } };
    },
  };
}
