import type { components } from "../../generated/api.js";
import type { EventType } from "../events/types.js";

export type ProviderId = components["schemas"]["IntegrationProviderId"];
export type WebhookProviderId = components["schemas"]["WebhookProviderId"];
export type CrmProviderId = components["schemas"]["CrmProviderId"];
export type AuthMethod = components["schemas"]["IntegrationAuthMethod"];

/** One provider of the catalog, as data (availability is decided per deployment). */
export interface ProviderEntry {
  id: ProviderId;
  name: string;
  tagline: string;
  description: string;
  authMethod: AuthMethod;
  ownerSetupRequired: boolean;
  defaultEvents: EventType[];
  supportsPerLeadPush: boolean;
  helpText: string;
  setupHelpUrl?: string;
}

const CRM_EVENTS: EventType[] = ["lead.created", "lead.updated"];

/** The document's provider table (neutral names), in the order the catalog lists them. */
export const PROVIDERS: readonly ProviderEntry[] = [
  {
    id: "crm_contacts",
    name: "Contacts CRM",
    tagline: "Create or update Contacts and Companies from your leads.",
    description:
      "Creates or updates Contacts matched by e-mail (a lead without e-mail creates no Contact) and " +
      "Companies matched by website domain, or by exact company name when the lead has no website of " +
      "its own; links each Contact to its Company.",
    authMethod: "oauth2",
    ownerSetupRequired: false,
    defaultEvents: CRM_EVENTS,
    supportsPerLeadPush: true,
    helpText:
      "Click connect and authorise the service in the CRM. Map lead fields to Contact and Company " +
      "fields under field mapping; unmapped fields use the defaults.",
  },
  {
    id: "crm_leads",
    name: "Leads CRM",
    tagline: "Create or update Leads, in production or a sandbox.",
    description:
      "Creates or updates Leads matched by Email; a lead without e-mail creates a new Lead each time. " +
      "Company defaults to 'Unknown' when the lead has no company name.",
    authMethod: "oauth2",
    ownerSetupRequired: false,
    defaultEvents: CRM_EVENTS,
    supportsPerLeadPush: true,
    helpText:
      "Click connect, choose production or sandbox and authorise the service in the CRM. Map lead " +
      "fields to Lead fields under field mapping.",
  },
  {
    id: "crm_deals",
    name: "Deals CRM",
    tagline: "Create Persons and Organizations, and optionally Deals.",
    description:
      "Matches Organizations by exact name and Persons by the service's lead id, then by e-mail; adds " +
      "a note with the lead id on each delivery; optionally creates a Deal in the pipeline and stage " +
      "you choose. The company's API domain is handled automatically.",
    authMethod: "oauth2",
    ownerSetupRequired: false,
    defaultEvents: CRM_EVENTS,
    supportsPerLeadPush: true,
    helpText:
      "Click connect and authorise the service in the CRM. To create Deals, turn on deal settings " +
      "and pick a pipeline and stage.",
  },
  {
    id: "webhook_tool_a",
    name: "Workflow tool A",
    tagline: "Start a workflow for every lead with a webhook trigger.",
    description: "Posts each event, signed with HMAC-SHA256, to the webhook trigger URL of a workflow.",
    authMethod: "hmac",
    ownerSetupRequired: true,
    defaultEvents: ["lead.created"],
    supportsPerLeadPush: true,
    helpText:
      "Create a workflow with a webhook trigger, copy its URL into targetUrl and store the signing " +
      "secret shown once at creation to verify X-SVC-Signature.",
  },
  {
    id: "webhook_tool_b",
    name: "Workflow tool B",
    tagline: "Feed leads into a workflow through a webhook node.",
    description: "Posts each event, signed with HMAC-SHA256, to the URL of a webhook node.",
    authMethod: "hmac",
    ownerSetupRequired: true,
    defaultEvents: ["lead.created"],
    supportsPerLeadPush: true,
    helpText:
      "Add a webhook node (method POST) to a workflow, activate it, copy its production URL into " +
      "targetUrl and store the signing secret shown once at creation.",
  },
  {
    id: "webhook_tool_c",
    name: "Workflow tool C",
    tagline: "Trigger a scenario with a custom webhook.",
    description: "Posts each event, signed with HMAC-SHA256, to a custom webhook trigger.",
    authMethod: "hmac",
    ownerSetupRequired: true,
    defaultEvents: ["lead.created"],
    supportsPerLeadPush: true,
    helpText:
      "Create a custom webhook trigger, copy its address into targetUrl, then send a test event so " +
      "the tool learns the payload's structure.",
  },
  {
    id: "webhook_tool_d",
    name: "Workflow tool D",
    tagline: "Receive leads in an HTTP source workflow.",
    description: "Posts each event, signed with HMAC-SHA256, to the endpoint of an HTTP source.",
    authMethod: "hmac",
    ownerSetupRequired: true,
    defaultEvents: ["lead.created"],
    supportsPerLeadPush: true,
    helpText:
      "Create a workflow with an HTTP source, copy its endpoint URL into targetUrl and store the " +
      "signing secret shown once at creation.",
  },
  {
    id: "table_webhook",
    name: "Table webhook",
    tagline: "Add a row to a table for every lead.",
    description:
      "Posts each event as signed JSON to a table's import webhook, which turns it into a row. " +
      "Cannot subscribe to export.leads.",
    authMethod: "hmac",
    ownerSetupRequired: true,
    defaultEvents: ["lead.created"],
    supportsPerLeadPush: true,
    helpText:
      "Create an import webhook on the table, copy its URL into targetUrl and map the JSON fields " +
      "to columns after a test event.",
  },
  {
    id: "generic_webhook",
    name: "Generic webhook",
    tagline: "Send signed JSON events to any HTTPS endpoint.",
    description:
      "Posts each event as signed JSON to any public endpoint; verify X-SVC-Signature with the " +
      "signing secret and skip duplicates by the event id.",
    authMethod: "hmac",
    ownerSetupRequired: true,
    defaultEvents: ["lead.created", "lead.updated"],
    supportsPerLeadPush: true,
    helpText:
      "Point targetUrl to an endpoint of yours that answers 2xx within 8 seconds. Optionally set an " +
      "apiKey, sent as X-SVC-API-Key to this destination.",
  },
];

/** Why a CRM is unavailable until the deployment configures it. */
export const CRM_UNAVAILABLE_REASON = "Not configured for this deployment.";

const BY_ID = new Map<string, ProviderEntry>(PROVIDERS.map((p) => [p.id, p]));

/** The catalog entry of a provider id (undefined for an unknown id). */
export function providerById(id: string): ProviderEntry | undefined {
  return BY_ID.get(id);
}

/** Whether a provider is one of the OAuth CRMs. */
export function isCrmProvider(id: string): id is CrmProviderId {
  return providerById(id)?.authMethod === "oauth2";
}

/**
 * The catalog with each entry's availability: webhooks are always available, a CRM only when the
 * deployment configures it (`configuredCrms`; none yet).
 */
export function providerCatalog(
  configuredCrms: ReadonlySet<string> = new Set(),
): (ProviderEntry & { available: boolean; reason?: string })[] {
  return PROVIDERS.map((p) =>
    p.authMethod === "oauth2" && !configuredCrms.has(p.id)
      ? { ...p, available: false, reason: CRM_UNAVAILABLE_REASON }
      : { ...p, available: true },
  );
}

/**
 * The one place of the provider event rules: CRMs take only `lead.created` and `lead.updated`, and
 * `table_webhook` never `export.leads`. Undefined when the provider takes the event, else why not.
 */
export function eventRefusal(provider: string, eventType: EventType): string | undefined {
  if (isCrmProvider(provider) && eventType !== "lead.created" && eventType !== "lead.updated") {
    return "a CRM integration takes only lead.created and lead.updated";
  }
  if (provider === "table_webhook" && eventType === "export.leads") {
    return "table_webhook cannot subscribe to export.leads";
  }
  return undefined;
}
