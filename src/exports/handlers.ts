import type { Db } from "../db/database.js";
import { defaultFileFormat, withFileType } from "../export-files/format.js";
import { toFileFormat } from "../export-formats/format.js";
import { resolveExportFormat } from "../export-formats/service.js";
import type { Handlers, OperationRequest } from "../http/contract.js";
import { errors } from "../http/errors.js";
import { runLongRunning, type LongRunningCall, type LongRunningDeps } from "../jobs/index.js";
import { exportAnswerForm } from "./answer-form.js";
import { parseExportRequest, storedFilters, type ExportAnswerForm } from "./job/input.js";
import { leadsExportJob } from "./job/kind.js";
import { exportMethodOf } from "../leads/delivery-channel.js";
import { channelScopedCall } from "./method.js";
import { checkExportFits } from "./job/service.js";

/**
 * The request as the job protocol sees it, the answer form and the channel included: a request
 * asking for the file and one asking for the JSON answer are different requests (an
 * Idempotency-Key replayed with the other form is 409 `idempotency_key_reused`; identical requests
 * join only with the same form and channel).
 */
function withAnswerForm(request: OperationRequest<"exportLeads">, answer: ExportAnswerForm): LongRunningCall {
  return channelScopedCall(request, { answer });
}

/** `POST /leads/export`: checks the input at once, then runs the export as a background job. */
export function exportHandlers(
  deps: LongRunningDeps & { db: Db; publicBaseUrl: string },
): Handlers<"exportLeads"> {
  const { db } = deps;
  return {
    async exportLeads(request) {
      const { accountId } = request.caller;
      const { leads, options } = parseExportRequest(request.body, request.query);
      const answer = exportAnswerForm(options.inline, request.http.rawHeaders.accept);
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
      await checkExportFits(db, { accountId, leads, caps: options.caps, format });
      return runLongRunning(withAnswerForm(request, answer), deps, {
        kind: leadsExportJob,
        accountId,
        input: {
          filters: storedFilters(leads),
          selectedIds: leads.selectedIds ? [...leads.selectedIds] : null,
          caps: options.caps,
          excludePurchased: leads.excludePurchased,
          format,
          answer,
          publicBaseUrl: deps.publicBaseUrl,
          method: exportMethodOf(request.caller),
        },
      });
    },
  };
}
