import { describeFailure, type Outbound, type PostResult } from "../../outbound/index.js";
import { apiKeyFor, type DeliveryIntegration } from "./delivery.js";
import { deliveryHeaders } from "./signature.js";

/** The envelope of every event (`WebhookEvent`). */
export interface EventEnvelope {
  id: string;
  type: string;
  occurredAt: string;
  userId: number;
  integrationId: number;
  provider: string;
  data: unknown;
}

/** The envelope of an event for one integration. */
export function envelopeFor(
  integration: DeliveryIntegration,
  event: { id: string; type: string; occurredAt: Date; data: unknown },
): EventEnvelope {
  return {
    id: event.id,
    type: event.type,
    occurredAt: event.occurredAt.toISOString(),
    userId: integration.accountId,
    integrationId: integration.id,
    provider: integration.provider,
    data: event.data,
  };
}

/** One attempt's outcome, as deliveries and the test / retry / push answers report it. */
export interface SendOutcome {
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  /** The document's `error`: the first 500 characters of a non-2xx answer, `HTTP <status>`, or why nothing answered. */
  error: string | null;
  /** The first 1,000 characters of the answer. */
  responseBody: string | null;
  retryAfterSeconds: number | null;
}

/**
 * The JSON of an envelope whose `data` is already JSON text (as stored): the same members in the
 * same order as `JSON.stringify(envelopeFor(...))`, without parsing and re-serializing the data.
 */
export function envelopeJson(
  integration: DeliveryIntegration,
  event: { id: string; type: string; occurredAt: Date },
  dataJson: string,
): string {
  return (
    `{"id":${JSON.stringify(event.id)},"type":${JSON.stringify(event.type)},` +
    `"occurredAt":"${event.occurredAt.toISOString()}","userId":${integration.accountId},` +
    `"integrationId":${integration.id},"provider":${JSON.stringify(integration.provider)},` +
    `"data":${dataJson}}`
  );
}

/**
 * One signed POST of an envelope to a destination, through the outbound guard (a destination
 * that is or resolves to a refused address is not contacted). Signed afresh at each attempt.
 */
export async function sendEnvelope(
  outbound: Outbound,
  integration: DeliveryIntegration,
  targetUrl: string,
  envelope: EventEnvelope,
): Promise<SendOutcome> {
  return sendEnvelopeJson(outbound, integration, targetUrl, envelope.type, JSON.stringify(envelope));
}

/** `sendEnvelope` of an envelope already serialized (`envelopeJson`). */
export async function sendEnvelopeJson(
  outbound: Outbound,
  integration: DeliveryIntegration,
  targetUrl: string,
  eventType: string,
  body: string,
): Promise<SendOutcome> {
  const headers = deliveryHeaders({
    eventType,
    secret: integration.signingSecret,
    body,
    apiKey: apiKeyFor(integration, targetUrl),
  });
  const result: PostResult = await outbound.post(targetUrl, { body, headers });
  return {
    ok: result.ok,
    statusCode: result.statusCode,
    latencyMs: Math.round(result.latencyMs),
    error: result.ok ? null : describeFailure(result),
    responseBody: result.responseBody,
    retryAfterSeconds: result.retryAfterSeconds,
  };
}
