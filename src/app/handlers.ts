import { profileHandlers } from "../accounts/handlers.js";
import { apiKeyHandlers } from "../auth/key-handlers.js";
import { dashboardSessionHandlers } from "../auth/sessions/handlers.js";
import { billingHandlers } from "../billing/handlers.js";
import { autoTopUpHandlers } from "../billing/auto-top-up/handlers.js";
import { aiHandlers } from "../ai/handlers.js";
import { autoRefineHandlers } from "../ai/auto-refine/handlers.js";
import { enrichmentHandlers } from "../enrichments/handlers.js";
import { exportBlacklistHandlers } from "../export-blacklist/handlers.js";
import { exportFormatHandlers } from "../export-formats/handlers.js";
import { exportHistoryHandlers } from "../export-history/handlers.js";
import { exportHandlers } from "../exports/handlers.js";
import { emailScheduleHandlers } from "../email-schedules/handlers.js";
import { filterPresetHandlers } from "../filter-presets/handlers.js";
import { integrationHandlers } from "../integrations/handlers.js";
import { deliveryHandlers } from "../integrations/deliveries/handlers.js";
import { crmHandlers } from "../integrations/crm/handlers.js";
import type { OperationHandlers } from "../http/contract.js";
import { jobHandlers } from "../jobs/handlers.js";
import { keywordListHandlers } from "../keyword-lists/handlers.js";
import { leadExportHistoryHandlers } from "../lead-export-history/handlers.js";
import { leadHandlers } from "../leads/handlers.js";
import { settingsHandlers } from "../settings/handlers.js";
import { systemHandlers } from "../system/handlers.js";
import type { AppContext } from "./context.js";

/**
 * Every operation of openapi.yaml and what implements it: an area's typed handler, or `NOT_BUILT`
 * (501 `not_implemented`). The type requires an entry for every operationId of the contract, so a
 * new operation in `spec/` does not compile until it is listed here; an operation listed as not
 * built and also given by an area's handlers does not compile either ("specified more than once").
 * The method and path of each come from openapi.yaml (src/http/spec.ts), never from this code.
 */
export function operationHandlers(ctx: AppContext): OperationHandlers {
  const signer = { signingSecret: ctx.signingSecret, publicBaseUrl: ctx.config.publicBaseUrl };
  return {
    // Built.
    ...systemHandlers(ctx),
    ...billingHandlers(ctx),
    ...autoTopUpHandlers(ctx),
    ...profileHandlers(ctx),
    ...settingsHandlers(ctx),
    ...leadHandlers(ctx),
    ...exportHandlers({ ...ctx, publicBaseUrl: ctx.config.publicBaseUrl }),
    ...emailScheduleHandlers({ ...ctx, publicBaseUrl: ctx.config.publicBaseUrl }),
    ...jobHandlers(ctx),
    ...filterPresetHandlers(ctx),
    ...integrationHandlers(ctx),
    ...deliveryHandlers(ctx),
    ...crmHandlers(ctx),
    ...keywordListHandlers(ctx),
    ...aiHandlers(ctx),
    ...autoRefineHandlers(ctx),
    ...exportBlacklistHandlers(ctx),
    ...leadExportHistoryHandlers(ctx),
    ...exportFormatHandlers(ctx),
    ...enrichmentHandlers({ ...ctx, signer }),
    ...exportHistoryHandlers({ ...ctx, signer }),
    ...apiKeyHandlers(ctx),
    ...dashboardSessionHandlers({ ...ctx, publicBaseUrl: ctx.config.publicBaseUrl }),
  };
}
