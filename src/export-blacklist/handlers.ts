import type { Db } from "../db/database.js";
import type { Handlers } from "../http/contract.js";
import { toAddResultBody, toBlacklistEntryBody } from "./presenter.js";
import { addToBlacklist, listBlacklist, removeFromBlacklist } from "./service.js";

/** `GET/POST /export-blacklist` and `DELETE /export-blacklist/{id}`. */
export function exportBlacklistHandlers({
  db,
}: {
  db: Db;
}): Handlers<"listExportBlacklist" | "addExportBlacklistEntries" | "deleteExportBlacklistEntry"> {
  return {
    async listExportBlacklist({ caller }) {
      const entries = await listBlacklist(db, caller.accountId);
      return { status: 200, body: { data: entries.map(toBlacklistEntryBody) } };
    },
    async addExportBlacklistEntries({ caller, body }) {
      const result = await addToBlacklist(db, caller.accountId, body);
      return { status: 201, body: { data: toAddResultBody(result) } };
    },
    async deleteExportBlacklistEntry({ caller, params }) {
      await removeFromBlacklist(db, caller.accountId, params.id);
      return { status: 200, body: { data: { message: "Blacklist entry deleted." } } };
    },
  };
}
