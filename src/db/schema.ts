import type { AccountTables } from "./schema/accounts.js";
import type { JobTables } from "./schema/jobs.js";
import type { ExportTables } from "./schema/exports.js";
import type { ExportJobTables } from "./schema/export-job.js";
import type { LeadSearchTables } from "./schema/lead-search.js";
import type { LeadTables } from "./schema/leads.js";
import type { IntegrationTables } from "./schema/integrations.js";
import type { EmailScheduleTables } from "./schema/email-schedules.js";
import type { AiTables } from "./schema/ai.js";
import type { BillingTables } from "./schema/billing.js";
import type { AutoTopUpTables } from "./schema/auto-top-up.js";
import type { EnrichmentTables } from "./schema/enrichments.js";
import type { DashboardTables } from "./schema/dashboard.js";

export type { AccountRow, ApiKeyRow } from "./schema/accounts.js";

/**
 * The database as Kysely sees it: one interface per area in `schema/`, joined here. Row types stay
 * in the repositories.
 */
export interface Database
  extends
    AccountTables,
    LeadTables,
    LeadSearchTables,
    ExportTables,
    JobTables,
    ExportJobTables,
    IntegrationTables,
    AiTables,
    BillingTables,
    AutoTopUpTables,
    EnrichmentTables,
    EmailScheduleTables,
    DashboardTables {}
