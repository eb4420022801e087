import { Router } from "express";
import { toFileFormat } from "../export-formats/format.js";
import { resolveExportFormat } from "../export-formats/service.js";
import { authOf, type AppContext } from "../http/context.js";
import { errors } from "../http/errors.js";
import { runLongRunning } from "../jobs/index.js";
import { defaultFileFormat, withFileType } from "../export-files/format.js";
import { parseExportRequest, storedFilters } from "./job/input.js";
import { leadsExportJob } from "./job/kind.js";
import { checkExportFits } from "./job/service.js";

/** Route of exportLeads: checks the input at once, then runs the export as a background job. */
export function exportRoutes(ctx: AppContext): Router {
  const router = Router();

  router.post("/api/v1/leads/export", async (req, res) => {
    const { accountId } = authOf(res);
    const { filters, options } = parseExportRequest(req.body);
    const saved = await resolveExportFormat(ctx.db, accountId, options.formatId);
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
    await checkExportFits(ctx.db, { accountId, filters, caps: options.caps, format });
    await runLongRunning(req, res, ctx, {
      kind: leadsExportJob,
      accountId,
      input: {
        filters: storedFilters(filters),
        caps: options.caps,
        format,
        inline: options.inline,
        publicBaseUrl: ctx.config.publicBaseUrl,
      },
    });
  });

  return router;
}
