import type { Db } from "../db/database.js";
import type { LinkSigner } from "../export-history/service.js";
import type { Handlers } from "../http/contract.js";
import type { FileStorage } from "../storage/file-storage.js";
import { toAcceptedBody, toRunBody } from "./presenter.js";
import { createEnrichmentRun, createResultLink, getEnrichmentRun, listEnrichmentRuns } from "./service.js";

type EnrichmentOperation = "createEnrichment" | "listEnrichments" | "getEnrichment" | "getEnrichmentDownload";

/** `POST/GET /enrichments`, `GET /enrichments/{id}` and its download link. */
export function enrichmentHandlers(deps: {
  db: Db;
  storage: FileStorage;
  signer: LinkSigner;
}): Handlers<EnrichmentOperation> {
  const { db, storage, signer } = deps;
  return {
    async createEnrichment({ caller, body }) {
      const run = await createEnrichmentRun(db, caller.accountId, body);
      return { status: 202, body: { data: toAcceptedBody(run) } };
    },
    async listEnrichments({ caller, query }) {
      const page = { limit: query.limit ?? 25, offset: query.offset ?? 0 };
      const { runs, totalCount } = await listEnrichmentRuns(db, caller.accountId, page);
      return { status: 200, body: { data: runs.map(toRunBody), totalCount, ...page } };
    },
    async getEnrichment({ caller, params }) {
      return {
        status: 200,
        body: { data: toRunBody(await getEnrichmentRun(db, caller.accountId, params.id)) },
      };
    },
    async getEnrichmentDownload({ caller, params }) {
      const link = await createResultLink(db, storage, signer, caller.accountId, params.id);
      return {
        status: 200,
        body: {
          data: {
            downloadUrl: link.url,
            expiresInSeconds: link.expiresInSeconds,
            url: link.url,
            expiresAt: link.expiresAt.toISOString(),
          },
        },
      };
    },
  };
}
