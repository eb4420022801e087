import { profileHandlers } from "../accounts/handlers.js";
import { exportBlacklistHandlers } from "../export-blacklist/handlers.js";
import { exportFormatHandlers } from "../export-formats/handlers.js";
import { exportHistoryHandlers } from "../export-history/handlers.js";
import { exportHandlers } from "../exports/handlers.js";
import { filterPresetHandlers } from "../filter-presets/handlers.js";
import { integrationHandlers } from "../integrations/handlers.js";
import { deliveryHandlers } from "../integrations/deliveries/handlers.js";
import { NOT_BUILT, type OperationHandlers } from "../http/contract.js";
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
    // Not built yet, by the area that will build them. Each answers 501 `not_implemented`.
    // AI helpers.
    suggestCategories: NOT_BUILT,
    generateKeywords: NOT_BUILT,
    getKeywordStatus: NOT_BUILT,
    // Purchase and billing.
    purchase: NOT_BUILT,
    claimKey: NOT_BUILT,
    purchaseCredits: NOT_BUILT,
    getOverageBudget: NOT_BUILT,
    updateOverageBudget: NOT_BUILT,
    cancelSubscription: NOT_BUILT,
    changePlan: NOT_BUILT,
    receivePaymentWebhook: NOT_BUILT,
    // E-mail schedules.
    listEmailSchedules: NOT_BUILT,
    createEmailSchedule: NOT_BUILT,
    updateEmailSchedule: NOT_BUILT,
    deleteEmailSchedule: NOT_BUILT,
    triggerEmailSchedule: NOT_BUILT,
    // Enrichments.
    createEnrichment: NOT_BUILT,
    listEnrichments: NOT_BUILT,
    getEnrichment: NOT_BUILT,
    getEnrichmentDownload: NOT_BUILT,
    // Lead export history: refresh, re-export, refresh-and-export.
    refreshLeadExportHistory: NOT_BUILT,
    reExportLeadExportHistory: NOT_BUILT,
    refreshAndExportLeadExportHistory: NOT_BUILT,
    // Integrations and events (webhooks), CRM adapters.
    connectIntegration: NOT_BUILT,
    integrationOAuthCallback: NOT_BUILT,
    getIntegrationFieldMapping: NOT_BUILT,
    updateIntegrationFieldMapping: NOT_BUILT,
    resetIntegrationFieldMapping: NOT_BUILT,
    testIntegrationFieldMapping: NOT_BUILT,
    listDealsCrmPipelines: NOT_BUILT,
    getDealsCrmDealFields: NOT_BUILT,

    // Built.
    ...systemHandlers(ctx),
    ...profileHandlers(ctx),
    ...settingsHandlers(ctx),
    ...leadHandlers(ctx),
    ...exportHandlers({ ...ctx, publicBaseUrl: ctx.config.publicBaseUrl }),
    ...jobHandlers(ctx),
    ...filterPresetHandlers(ctx),
    ...integrationHandlers(ctx),
    ...deliveryHandlers(ctx),
    ...keywordListHandlers(ctx),
    ...exportBlacklistHandlers(ctx),
    ...leadExportHistoryHandlers(ctx),
    ...exportFormatHandlers(ctx),
    ...exportHistoryHandlers({ ...ctx, signer }),
  };
}
