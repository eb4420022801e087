import type { Db } from "../db/database.js";
import type { Handlers } from "../http/contract.js";
import { toExportFormatBody } from "./presenter.js";
import {
  createExportFormat,
  deleteExportFormat,
  getExportFormat,
  listExportFormats,
  setDefaultExportFormat,
  updateExportFormat,
} from "./service.js";

type ExportFormatOperation =
  | "listExportFormats"
  | "createExportFormat"
  | "getExportFormat"
  | "updateExportFormat"
  | "deleteExportFormat"
  | "setDefaultExportFormat";

/** CRUD of export formats and `set-default`. */
export function exportFormatHandlers({ db }: { db: Db }): Handlers<ExportFormatOperation> {
  return {
    async listExportFormats({ caller }) {
      const formats = await listExportFormats(db, caller.accountId);
      return { status: 200, body: { data: formats.map(toExportFormatBody) } };
    },
    async createExportFormat({ caller, body }) {
      const format = await createExportFormat(db, caller.accountId, body);
      return { status: 201, body: { data: toExportFormatBody(format) } };
    },
    async getExportFormat({ caller, params }) {
      const format = await getExportFormat(db, caller.accountId, params.id);
      return { status: 200, body: { data: toExportFormatBody(format) } };
    },
    async updateExportFormat({ caller, params, body }) {
      const format = await updateExportFormat(db, caller.accountId, params.id, body);
      return { status: 200, body: { data: toExportFormatBody(format) } };
    },
    async deleteExportFormat({ caller, params }) {
      await deleteExportFormat(db, caller.accountId, params.id);
      return { status: 200, body: { data: { message: "Export format deleted." } } };
    },
    async setDefaultExportFormat({ caller, params }) {
      const format = await setDefaultExportFormat(db, caller.accountId, params.id);
      return { status: 200, body: { data: toExportFormatBody(format) } };
    },
  };
}
