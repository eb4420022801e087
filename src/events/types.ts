import type { components } from "../../generated/api.js";

/** The events integrations subscribe to (`WebhookEventType` of the contract). */
export type EventType = components["schemas"]["WebhookEventType"];

/** The lead events, whose outbox rows carry lead versions instead of data. */
export type LeadEventType = "lead.created" | "lead.updated";

/** How a lead reached the account, as carried in lead events (`source`). */
export type LeadEventSource = components["schemas"]["LeadSummarySource"];

/** One lead at the version the account received. */
export interface LeadEventRef {
  leadId: number;
  version: number;
}
