import type { Db } from "../db/database.js";
import type { Handlers } from "../http/contract.js";
import type { FileStorage } from "../storage/file-storage.js";
import { toExportHistoryEntryBody, toFileDownloadLink } from "./presenter.js";
import {
  createDownloadLink,
  listExportHistory,
  openExportFile,
  openSignedFile,
  type LinkSigner,
} from "./service.js";

type ExportHistoryOperation =
  "listExportHistory" | "downloadExportFile" | "getExportFileDownloadUrl" | "downloadSignedFile";

/** Export history: the list, downloads, signed links and the signed download itself. */
export function exportHistoryHandlers(deps: {
  db: Db;
  storage: FileStorage;
  signer: LinkSigner;
}): Handlers<ExportHistoryOperation> {
  const { db, storage, signer } = deps;
  return {
    async listExportHistory({ caller, query }) {
      const page = { limit: query.limit ?? 50, offset: query.offset ?? 0 };
      const { entries, totalCount } = await listExportHistory(db, storage, caller.accountId, page);
      return {
        status: 200,
        body: {
          data: entries.map(toExportHistoryEntryBody),
          totalCount,
          limit: page.limit,
          offset: page.offset,
        },
      };
    },
    async downloadExportFile({ caller, params }) {
      return { status: 200, file: await openExportFile(db, storage, caller.accountId, params.id) };
    },
    async getExportFileDownloadUrl({ caller, params }) {
      const now = new Date();
      const link = await createDownloadLink(db, storage, signer, caller.accountId, params.id, now);
      return { status: 200, body: { data: toFileDownloadLink(link, now) } };
    },
    // No API key: the signed token is the authorization.
    async downloadSignedFile({ params }) {
      return { status: 200, file: await openSignedFile(db, storage, signer.signingSecret, params.token) };
    },
  };
}
