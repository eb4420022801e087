import type { components } from "../../../generated/api.js";
import { chargeDelivery } from "../../credits/charge.js";
import type { Db } from "../../db/database.js";
import { newEventId } from "../../events/ids.js";
import { blacklistedDomains, isLeadBlacklisted } from "../../export-blacklist/match.js";
import { ApiError, errors } from "../../http/errors.js";
import { findLeadsByIds } from "../../leads/repository.js";
import { toLeadSummary, type LeadSummary } from "../../leads/summary.js";
import { recordDeliveredLeads } from "../../leads/versions.js";
import type { Outbound } from "../../outbound/index.js";
import { eventRefusal, isCrmProvider } from "../providers.js";
import type { Delivery, DeliveryIntegration } from "./delivery.js";
import {
  findDelivery,
  findIntegration,
  insertDeliveries,
  noteSuccess,
  recordAttempt,
  requeueBatches,
} from "./repository.js";
import { envelopeFor, sendEnvelope, type SendOutcome } from "./send.js";
import { usableCrm } from "../crm/availability.js";
import { crmRuntime, type CrmDeps, type CrmRuntime } from "../crm/runtime.js";
import { crmTarget, sendToCrm } from "../crm/send.js";

type EventType = components["schemas"]["WebhookEventType"];

/** What the test, retry and push operations need (`config`: the CRMs of this deployment). */
export interface ManualSendDeps {
  db: Db;
  outbound: Outbound;
  config?: CrmDeps["config"];
}

/** The CRM runtime when this deployment configures the integration's CRM; else undefined. */
function crmOf(deps: ManualSendDeps, provider: string): CrmRuntime | undefined {
  if (!deps.config || !isCrmProvider(provider) || !usableCrm(deps.config.crm, provider)) return undefined;
  return crmRuntime({ db: deps.db, outbound: deps.outbound, config: deps.config });
}

/** 503 `provider_unavailable`: a CRM that is not configured for this deployment (no Retry-After). */
export function providerUnavailable(provider: string): ApiError {
  return new ApiError(
    503,
    "provider_unavailable",
    `The ${provider} provider is not configured for this deployment; do not retry.`,
  );
}

/** The account's integration, or 404. */
export async function integrationOf(db: Db, accountId: number, id: number): Promise<DeliveryIntegration> {
  const integration = await findIntegration(db, accountId, id);
  if (!integration) throw errors.notFound("Integration not found.");
  return integration;
}

/** Test and retry refuse a paused integration; a CRM that is not configured is 503. */
function assertSendable(deps: ManualSendDeps, integration: DeliveryIntegration): void {
  if (isCrmProvider(integration.provider) && !crmOf(deps, integration.provider)) {
    throw providerUnavailable(integration.provider);
  }
  if (integration.status === "disabled") {
    throw errors.badRequest("The integration is paused (disabled): set its status to connected first.");
  }
}

/**
 * Sends one event once to the integration's destination and records it in the delivery log (a
 * manual delivery: no retries, not counted toward `needs_attention`). A success on a
 * `needs_attention` integration connects it again.
 */
async function sendOnce(
  deps: ManualSendDeps,
  integration: DeliveryIntegration,
  event: { type: EventType; data: unknown; targetUrl: string },
): Promise<SendOutcome & { crmResult?: Record<string, string> | null }> {
  const eventId = newEventId();
  const occurredAt = new Date();
  let outcome: SendOutcome & { crmResult?: Record<string, string> | null };
  if (isCrmProvider(integration.provider)) {
    // A CRM is written through its adapter (src/integrations/crm/), logged like a webhook attempt.
    const sent = await sendToCrm(crmOf(deps, integration.provider), integration, event.data);
    outcome = { ...sent.outcome, crmResult: sent.result };
  } else {
    outcome = await sendEnvelope(
      deps.outbound,
      integration,
      event.targetUrl,
      envelopeFor(integration, { id: eventId, type: event.type, occurredAt, data: event.data }),
    );
  }
  await deps.db.transaction().execute(async (trx) => {
    const [id] = await insertDeliveries(trx, [
      {
        accountId: integration.accountId,
        integrationId: integration.id,
        subscriptionId: null,
        eventId,
        eventType: event.type,
        occurredAt,
        targetUrl: event.targetUrl,
        data: event.data,
        automatic: false,
        status: "pending",
      },
    ]);
    await recordAttempt(trx, id as number, {
      status: outcome.ok ? "success" : "failed",
      statusCode: outcome.statusCode,
      latencyMs: outcome.latencyMs,
      errorMessage: outcome.error,
      responseBody: outcome.responseBody,
      completed: true,
      nextAttemptAt: null,
    });
    if (outcome.ok) await noteSuccess(trx, integration.id, true);
  });
  return outcome;
}

const SAMPLE = { id: 0, companyName: "Sample Plumbing Co", website: "https://sample-plumbing.example" };

/** The made-up lead of a sample `export.leads` batch. */
const SAMPLE_SUMMARY: LeadSummary = {
  id: SAMPLE.id,
  databaseType: "other",
  source: "api",
  companyName: SAMPLE.companyName,
  website: SAMPLE.website,
  email: "owner@sample-plumbing.example",
  emailSecondary: null,
  emailTier1: null,
  emailTier2: null,
  emailTier3: null,
  emailTier4: null,
  emailTier5: null,
  emailTier6: null,
  phone: "+1 512 555 0100",
  phoneSecondary: null,
  phoneTotal: 1,
  address: "100 Sample St",
  city: "Austin",
  state: "TX",
  zip: "78701",
  country: "US",
  category: "Plumber",
  description: "A made-up lead of a test delivery.",
  lastBuyingSignal: null,
  buyingSignalType: ["Newly Added"],
  lastUpdated: null,
  lastUpdatedReason: ["Newly Added"],
};

/** `POST .../test`: a test `lead.created`, or a sample `export.leads` batch. */
export async function testIntegration(
  deps: ManualSendDeps,
  accountId: number,
  id: number,
  eventType: "lead.created" | "export.leads",
): Promise<SendOutcome> {
  const integration = await integrationOf(deps.db, accountId, id);
  assertSendable(deps, integration);
  const refusal = eventRefusal(integration.provider, eventType);
  if (refusal !== undefined) {
    throw errors.validation(refusal, [{ path: ["body", "eventType"], message: refusal }]);
  }
  const data =
    eventType === "lead.created"
      ? {
          test: true,
          message: "Test event from the lead service: your integration is receiving events.",
          // A CRM gets a sample it can match and write in full (a real record, not removed).
          sample: isCrmProvider(integration.provider) ? { ...SAMPLE_SUMMARY, ...SAMPLE } : SAMPLE,
        }
      : {
          exportId: `test${Date.now()}`,
          batchIndex: 1,
          batchCount: 1,
          totalLeads: 1,
          leads: [SAMPLE_SUMMARY],
          test: true,
        };
  return sendOnce(deps, integration, { type: eventType, data, targetUrl: destinationOf(integration) });
}

function destinationOf(integration: DeliveryIntegration): string {
  if (isCrmProvider(integration.provider)) return crmTarget(integration.provider);
  if (integration.targetUrl === null) throw providerUnavailable(integration.provider);
  return integration.targetUrl;
}

/** What a retry did: one attempt, or the unsent batches queued. */
export type RetryOutcome =
  { kind: "sent"; outcome: SendOutcome } | { kind: "queued"; queuedBatches: number; queuedLeads: number };

/**
 * `POST .../deliveries/{id}/retry`: the stored data once more to the original URL, as a new event
 * (a new id: the receiver may have processed the first); for a batched `export.leads` delivery,
 * its unsent batches are queued again.
 */
export async function retryDelivery(
  deps: ManualSendDeps,
  accountId: number,
  id: number,
  deliveryId: number,
): Promise<RetryOutcome> {
  const integration = await integrationOf(deps.db, accountId, id);
  const delivery = await findDelivery(deps.db, integration.id, deliveryId);
  if (!delivery) throw errors.notFound("Delivery not found.");
  assertSendable(deps, integration);
  if (delivery.batchSummary) return requeue(deps.db, delivery);
  const outcome = await sendOnce(deps, integration, {
    type: delivery.eventType,
    data: delivery.data,
    targetUrl: delivery.targetUrl,
  });
  return { kind: "sent", outcome };
}

async function requeue(db: Db, delivery: Delivery): Promise<RetryOutcome> {
  const summary = delivery.batchSummary;
  if (!summary) throw new Error("not a batched delivery");
  const queuedBatches = summary.batchCount - summary.batchesSent;
  const queuedLeads = summary.leadCount - summary.leadsSent;
  if (queuedBatches > 0 && delivery.status !== "queued") {
    await db
      .transaction()
      .execute((trx) =>
        requeueBatches(trx, delivery.id, { ...summary, batchesFailed: 0, currentBatchAttempts: 0 }),
      );
  }
  return { kind: "queued", queuedBatches, queuedLeads };
}

/** The answer of a push. */
export interface PushOutcome {
  outcome: SendOutcome & { crmResult?: Record<string, string> | null };
  tracked: boolean;
  creditsUsed: number;
}

/** A push: a lead of the database by id, or the client's own data. */
export type PushInput = { leadId: number } | { lead: Record<string, unknown> };

/**
 * `POST .../push-lead`. By id: 404 for an unknown lead, 400 for a blacklisted one, then in one
 * transaction the lead export history entry (method `crm_push`), its charge (1 credit when new to
 * the account, 402 when it cannot be paid) and the lead events of the account's other
 * integrations; after the commit, one attempt to this integration. Own data is sent free and
 * untracked.
 */
export async function pushLead(
  deps: ManualSendDeps,
  accountId: number,
  id: number,
  input: PushInput,
): Promise<PushOutcome> {
  const integration = await integrationOf(deps.db, accountId, id);
  if (isCrmProvider(integration.provider) && !crmOf(deps, integration.provider)) {
    throw providerUnavailable(integration.provider);
  }
  if (integration.status !== "connected") {
    throw errors.badRequest(
      `The integration is ${integration.status}: only a connected integration takes pushes.`,
    );
  }
  const targetUrl = destinationOf(integration);
  if (!("leadId" in input)) {
    const outcome = await sendOnce(deps, integration, {
      type: "lead.created",
      data: { lead: input.lead, source: "manual_push" },
      targetUrl,
    });
    return { outcome, tracked: false, creditsUsed: 0 };
  }
  const [lead] = await findLeadsByIds(deps.db, [input.leadId]);
  if (!lead) throw errors.notFound("Lead not found.");
  if (isLeadBlacklisted(await blacklistedDomains(deps.db, accountId), lead)) {
    throw errors.badRequest("The lead's domain is on the export blacklist: nothing was charged or sent.");
  }
  const { charged, summary } = await deps.db.transaction().execute(async (trx) => {
    const result = await chargeDelivery(trx, {
      accountId,
      reason: "integration_push",
      reference: `integration:${integration.id}`,
      entryWait: "bounded",
      deliver: async (t) => ({
        lead: await recordDeliveredLeads(t, {
          accountId,
          method: "crm_push",
          exportedAt: new Date(),
          leadIds: [lead.id],
          push: { integrationId: integration.id },
        }),
      }),
    });
    const [current] = await findLeadsByIds(trx, [lead.id]);
    return { charged: result, summary: toLeadSummary(current ?? lead, "crm_push") };
  });
  const outcome = await sendOnce(deps, integration, { type: "lead.created", data: summary, targetUrl });
  return { outcome, tracked: true, creditsUsed: charged.tenths / 10 };
}
