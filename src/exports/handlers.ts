import type { Db } from "../db/database.js";
import { defaultFileFormat, withFileType } from "../export-files/format.js";
import { toFileFormat } from "../export-formats/format.js";
import { resolveExportFormat } from "../export-formats/service.js";
import type { Handlers } from "../http/contract.js";
import { errors } from "../http/errors.js";
import { runLongRunning, type LongRunningDeps } from "../jobs/index.js";
import { parseExportRequest, storedFilters } from "./job/input.js";
import { leadsExportJob } from "./job/kind.js";
import { checkExportFits } from "./job/service.js";

/** `POST /leads/export`: checks the input at once, then runs the export as a background job. */
export function exportHandlers(
  deps: LongRunningDeps & { db: Db; publicBaseUrl: string },
): Handlers<"exportLeads"> {
  const { db } = deps;
  return {
    async exportLeads(request) {
      const { accountId } = request.caller;
      const { filters, options } = parseExportRequest(request.body);
      const saved = await resolveExportFormat(db, accountId, options.formatId);
      if (saved === undefined) {
        throw errors.validation("formatId: no export format with this id.", [
          { path: ["body", "formatId"], message: "no export format with this id" },
        ]);
      }
      const format = withFileType(
        saved ? toFileFormat(saved) : defaultFileFormat(),
        options.fileType ?? undefined,
      );
      // Every check that can refuse the export runs before a job exists (nothing charged).
      await checkExportFits(db, { accountId, filters, caps: options.caps, format });
      return runLongRunning(request, deps, {
        kind: leadsExportJob,
        accountId,
        input: {
          filters: storedFilters(filters),
          caps: options.caps,
          format,
          inline: options.inline,
          publicBaseUrl: deps.publicBaseUrl,
        },
      });
    },
  };
}
