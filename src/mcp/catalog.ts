import type { OperationId } from "../http/contract.js";
import type { InputShaping } from "./input-schema.js";

/** MCP tool annotations (hints for the client; set to what the operation really does). */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  /** Reaches outside the service (a webhook, a CRM, a website, an e-mail). */
  openWorldHint: boolean;
}

/** One tool: the contract operation it stands for, what an assistant is told, its hints. */
export interface ToolDefinition {
  name: string;
  title: string;
  operationId: OperationId;
  description: string;
  annotations: ToolAnnotations;
  shaping?: InputShaping;
}

const READ: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
const WRITE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
};
const SET: ToolAnnotations = { ...WRITE, idempotentHint: true };
const REMOVE: ToolAnnotations = { ...WRITE, destructiveHint: true, idempotentHint: true };
const SENDS: ToolAnnotations = { ...WRITE, openWorldHint: true };

const FREE = "Free (no credits).";
const JOB =
  "Long-running: answers a job (`jobId`, `status`); poll it with get_job until it is completed, then its result holds the answer.";
const CHARGES =
  "COSTS CREDITS: 1 credit per lead you have not received before (leads you already have are free, ever).";

/**
 * The tool catalogue (docs/mcp.md): what an assistant needs to do a customer's work end to end.
 * Each tool is one REST operation, called through the same pipeline as REST (key, rate limits,
 * validation, charging, the job protocol), so its rules and errors are the REST ones.
 */
export const TOOLS: readonly ToolDefinition[] = [
  // Account.
  {
    name: "get_profile",
    title: "Profile and credit balance",
    operationId: "getProfile",
    description: `The account: plan, subscription, credit balance (spendable, permanent, monthly), targeting settings. ${FREE}`,
    annotations: READ,
  },
  {
    name: "update_profile",
    title: "Update profile",
    operationId: "updateProfile",
    description: `Changes profile and targeting settings (target categories and locations, e-mail results, ...). ${FREE}`,
    annotations: SET,
  },
  // Leads.
  {
    name: "preview_leads",
    title: "Preview leads",
    operationId: "previewLeads",
    description: `Counts the leads a search would return and shows masked samples. ${FREE} Use it before search_leads or export_leads.`,
    annotations: READ,
  },
  {
    name: "search_leads",
    title: "Search leads",
    operationId: "searchLeads",
    description: `Finds leads by keywords, location and filters and returns them with their contact details. ${CHARGES} Sends lead.created events to subscribed integrations.`,
    annotations: { ...WRITE, openWorldHint: true },
  },
  {
    name: "export_leads",
    title: "Export leads to a file",
    operationId: "exportLeads",
    description: `Exports the leads of a search as a CSV, XLSX or JSON file in an export format. ${CHARGES} ${JOB} The result lists the files with their download paths (\`downloadUrl\`, with the API key) and signed direct links (\`directDownloadUrl\`, valid for a short time, no key).`,
    annotations: { ...WRITE, openWorldHint: true },
    shaping: { fixedBody: { inline: false }, omit: ["inline"] },
  },
  {
    name: "get_job",
    title: "Job status and result",
    operationId: "getJob",
    description: `The state of a long-running request (export, refresh, trigger, suggestions) and, once completed, its result. ${FREE}`,
    annotations: READ,
  },
  // Export history and lead export history.
  {
    name: "list_export_history",
    title: "Export history",
    operationId: "listExportHistory",
    description: `The files exported before (newest first). ${FREE}`,
    annotations: READ,
  },
  {
    name: "get_export_download_url",
    title: "Download link of an exported file",
    operationId: "getExportFileDownloadUrl",
    description: `A signed download link of a file of the export history, valid for a short time. ${FREE}`,
    annotations: READ,
  },
  {
    name: "list_lead_export_history",
    title: "Leads received",
    operationId: "listLeadExportHistory",
    description: `Every lead the account has received (one entry per lead, with how and when). ${FREE}`,
    annotations: READ,
  },
  {
    name: "refresh_lead_export_history",
    title: "Refresh received leads",
    operationId: "refreshLeadExportHistory",
    description: `Brings received leads up to date with the database and tells which changed. ${FREE} ${JOB} Sends lead.updated events to subscribed integrations for leads with newer data.`,
    annotations: SENDS,
  },
  {
    name: "re_export_lead_export_history",
    title: "Re-export received leads",
    operationId: "reExportLeadExportHistory",
    description: `A file of received leads as they were delivered. ${FREE} ${JOB}`,
    annotations: WRITE,
  },
  {
    name: "refresh_and_export_lead_export_history",
    title: "Refresh and export received leads",
    operationId: "refreshAndExportLeadExportHistory",
    description: `Refreshes received leads, then exports them to a file. ${FREE} ${JOB} Sends lead.updated events for leads with newer data.`,
    annotations: SENDS,
  },
  // Saved inputs.
  {
    name: "list_filter_presets",
    title: "Filter presets",
    operationId: "listFilterPresets",
    description: `Saved searches. ${FREE}`,
    annotations: READ,
  },
  {
    name: "create_filter_preset",
    title: "Save a filter preset",
    operationId: "createFilterPreset",
    description: `Saves search parameters under a name. ${FREE}`,
    annotations: WRITE,
  },
  {
    name: "delete_filter_preset",
    title: "Delete a filter preset",
    operationId: "deleteFilterPreset",
    description: `Deletes a saved search. ${FREE}`,
    annotations: REMOVE,
  },
  {
    name: "list_keyword_lists",
    title: "Keyword lists",
    operationId: "listKeywordLists",
    description: `Saved positive and negative keyword lists. ${FREE}`,
    annotations: READ,
  },
  {
    name: "create_keyword_list",
    title: "Create a keyword list",
    operationId: "createKeywordList",
    description: `Saves a keyword list. ${FREE}`,
    annotations: WRITE,
  },
  {
    name: "update_keyword_list",
    title: "Replace a keyword list",
    operationId: "updateKeywordList",
    description: `Replaces a keyword list's name and keywords. ${FREE}`,
    annotations: SET,
  },
  {
    name: "delete_keyword_list",
    title: "Delete a keyword list",
    operationId: "deleteKeywordList",
    description: `Deletes a keyword list. ${FREE}`,
    annotations: REMOVE,
  },
  {
    name: "list_export_blacklist",
    title: "Blacklisted domains",
    operationId: "listExportBlacklist",
    description: `Domains never delivered to this account. ${FREE}`,
    annotations: READ,
  },
  {
    name: "add_export_blacklist_entries",
    title: "Blacklist domains",
    operationId: "addExportBlacklistEntries",
    description: `Adds domains that searches, exports and schedules never deliver. ${FREE}`,
    annotations: SET,
  },
  {
    name: "delete_export_blacklist_entry",
    title: "Remove a blacklisted domain",
    operationId: "deleteExportBlacklistEntry",
    description: `Removes a domain from the blacklist. ${FREE}`,
    annotations: REMOVE,
  },
  {
    name: "list_export_formats",
    title: "Export formats",
    operationId: "listExportFormats",
    description: `Saved export formats (file type, columns, split rules), for export tools' formatId. ${FREE}`,
    annotations: READ,
  },
  // Integrations.
  {
    name: "list_integrations",
    title: "Integrations",
    operationId: "listIntegrations",
    description: `Connected webhooks and CRMs with their status and subscribed events. ${FREE}`,
    annotations: READ,
  },
  {
    name: "create_webhook_integration",
    title: "Connect a webhook",
    operationId: "createWebhookIntegration",
    description: `Connects an HTTPS endpoint that receives signed events (lead.created, ...). The signing secret is shown once in the answer. ${FREE}`,
    annotations: WRITE,
  },
  {
    name: "update_integration",
    title: "Change an integration",
    operationId: "updateIntegration",
    description: `Renames, pauses (status disabled) or resumes an integration, or changes its events and destinations. ${FREE}`,
    annotations: SET,
  },
  {
    name: "test_integration",
    title: "Send a test event",
    operationId: "testIntegration",
    description: `SENDS a sample event to the integration now and answers how it went. ${FREE}`,
    annotations: SENDS,
  },
  {
    name: "push_lead_to_integration",
    title: "Push a lead to an integration",
    operationId: "pushLeadToIntegration",
    description: `SENDS a lead of the database (by leadId) to the integration now. 1 credit when the lead is new to you; leads you already have are free. Pushing your own lead data is REST only.`,
    annotations: SENDS,
    shaping: { bodySchema: "PushLeadById" },
  },
  {
    name: "list_integration_deliveries",
    title: "Delivery log",
    operationId: "listIntegrationDeliveries",
    description: `The latest deliveries of an integration with their outcome. ${FREE}`,
    annotations: READ,
  },
  // E-mail schedules.
  {
    name: "list_email_schedules",
    title: "E-mail schedules",
    operationId: "listEmailSchedules",
    description: `Schedules that e-mail new matching leads to recipients. ${FREE}`,
    annotations: READ,
  },
  {
    name: "trigger_email_schedule",
    title: "Send a schedule now",
    operationId: "triggerEmailSchedule",
    description: `SENDS the schedule's new leads by e-mail now. ${CHARGES} ${JOB}`,
    annotations: SENDS,
  },
  // Enrichments.
  {
    name: "start_enrichment",
    title: "Enrich websites",
    operationId: "createEnrichment",
    description: `Finds contact details for a list of website URLs: from the lead database first, then by reading the websites. COSTS CREDITS within maxCredits (1 per new database match, 0.1 per live result). Answers the run at once; follow it with get_enrichment.`,
    annotations: SENDS,
  },
  {
    name: "list_enrichments",
    title: "Enrichment runs",
    operationId: "listEnrichments",
    description: `Enrichment runs, newest first. ${FREE}`,
    annotations: READ,
  },
  {
    name: "get_enrichment",
    title: "Enrichment run",
    operationId: "getEnrichment",
    description: `An enrichment run's status, counts and credits. ${FREE}`,
    annotations: READ,
  },
  {
    name: "get_enrichment_download_url",
    title: "Enrichment result link",
    operationId: "getEnrichmentDownload",
    description: `A signed download link of a finished run's result file. ${FREE}`,
    annotations: READ,
  },
  // AI helpers.
  {
    name: "suggest_categories",
    title: "Suggest lead categories",
    operationId: "suggestCategories",
    description: `Suggests lead categories to target from a company description (may read the company's website). ${FREE} ${JOB}`,
    annotations: { ...READ, idempotentHint: false, openWorldHint: true },
  },
  {
    name: "generate_keywords",
    title: "Generate keyword lists",
    operationId: "generateKeywords",
    description: `Generates positive and negative keyword lists from the profile's target categories and locations, REPLACING the account's keyword lists (in the background; see get_keyword_status). ${FREE}`,
    annotations: { ...WRITE, destructiveHint: true },
  },
  {
    name: "get_keyword_status",
    title: "Keyword generation status",
    operationId: "getKeywordStatus",
    description: `Keyword generations of the last 24 hours and the lists they produced. ${FREE}`,
    annotations: READ,
  },
  {
    name: "enable_auto_refine",
    title: "Start refining a keyword list",
    operationId: "enableAutoRefine",
    description: `Starts refining a keyword list and its pair against the lead database in the background (REWRITES their keywords; see get_auto_refine_status). At most 3 run at once in the service: when running is false, nothing was queued; try again later. ${FREE}`,
    annotations: { ...WRITE, destructiveHint: true },
  },
  {
    name: "disable_auto_refine",
    title: "Stop refining a keyword list",
    operationId: "disableAutoRefine",
    description: `Turns auto-refine off for a keyword list and its pair; a running refinement stops before its next pass. ${FREE}`,
    annotations: SET,
  },
  {
    name: "get_auto_refine_status",
    title: "Keyword auto-refine status",
    operationId: "getAutoRefineStatus",
    description: `Auto-refine state of the keyword lists (or one, with listId): status, rounds, score per round. ${FREE}`,
    annotations: READ,
  },
];
