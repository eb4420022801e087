import type { EventType } from "../../events/types.js";

/** Progress of a batched `export.leads` delivery, as stored. */
export interface StoredBatchSummary {
  exportId: string;
  batchCount: number;
  batchesSent: number;
  batchesFailed: number;
  leadCount: number;
  leadsSent: number;
  /** Failed attempts of the batch being sent (the retry schedule applies per batch). */
  currentBatchAttempts: number;
}

export type DeliveryStatus = "pending" | "success" | "failed" | "queued" | "stopped" | "not_sent";

/** One delivery: an event on its way to one destination of an integration. */
export interface Delivery {
  id: number;
  accountId: number;
  integrationId: number;
  subscriptionId: number | null;
  eventId: string;
  eventType: EventType;
  occurredAt: Date;
  targetUrl: string;
  /** The event's `data`; for `export.leads` the export's lead versions (batches are built when sent). */
  data: unknown;
  /** Sent by the worker with retries (false: one attempt made by a test, retry or push). */
  automatic: boolean;
  status: DeliveryStatus;
  statusCode: number | null;
  attemptCount: number;
  latencyMs: number | null;
  errorMessage: string | null;
  responseBody: string | null;
  nextAttemptAt: Date | null;
  batchSummary: StoredBatchSummary | null;
  createdAt: Date;
  completedAt: Date | null;
}

/** What a delivery is sent with: its integration's state and secrets. */
export interface DeliveryIntegration {
  id: number;
  accountId: number;
  provider: string;
  status: string;
  targetUrl: string | null;
  signingSecret: string;
  apiKey: string | null;
  apiKeyDestinations: string[];
}

/** The header API key goes only to the destinations it was set for. */
export function apiKeyFor(integration: DeliveryIntegration, targetUrl: string): string | null {
  if (integration.apiKey === null) return null;
  return integration.apiKeyDestinations.includes(targetUrl) ? integration.apiKey : null;
}

/** Leads per `export.leads` batch (docs/events.md). */
export const EXPORT_LEADS_BATCH_SIZE = 100;

/** The stored data of an `export.leads` delivery: the export's leads at their versions. */
export interface ExportLeadsStoredData {
  exportId: string;
  source: string;
  leads: [number, number][];
}
