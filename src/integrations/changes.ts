import type { EventType } from "../events/types.js";
import type { BodyOf } from "../http/contract.js";
import { errors, type ErrorDetail } from "../http/errors.js";
import { eventRefusal, isCrmProvider } from "./providers.js";
import {
  subscriptionKey,
  type Integration,
  type IntegrationChange,
  type IntegrationStatus,
  type SubscriptionValues,
} from "./repository.js";

/** A PATCH body as sent (schema-checked). */
export type IntegrationUpdateInput = BodyOf<"updateIntegration">;

/** At most this many subscriptions per integration, after merging duplicates. */
export const MAX_SUBSCRIPTIONS = 20;

/** What a change adds, which the account owner is told of (owner-notices.ts). */
export interface Additions {
  /** URLs the integration did not send to before. */
  destinations: string[];
  /** Events that are delivered after the change and were not before, with their destination. */
  events: { eventType: EventType; destination: string | null }[];
  /** The status the integration was re-enabled from (`connected` again), if it was. */
  reEnabledFrom?: IntegrationStatus;
}

/** Whether a change adds anything the owner must hear of. */
export function addsSomething(additions: Additions): boolean {
  return (
    additions.destinations.length > 0 || additions.events.length > 0 || additions.reEnabledFrom !== undefined
  );
}

/** A PATCH computed on one read of the integration, ready to be written on top of its revision. */
export interface UpdatePlan {
  /** Nothing to write: the body has no field, or only a no-op `needs_attention`. */
  empty: boolean;
  change: IntegrationChange;
  /** The new list of subscriptions (replaces all), when sent. */
  subscriptions?: SubscriptionValues[];
  /** Re-point every subscription to the new `targetUrl` (a `defaultTargetUrl` without `subscriptions`). */
  clearSubscriptionTargets: boolean;
  /** A new `targetUrl`: no other integration of the provider may use it. */
  repointTo?: string;
  /** Every destination the body names: each is checked against the outbound guard. */
  urls: string[];
  additions: Additions;
}

/**
 * Computes a PATCH on the integration as read (the rules of docs/integrations.md): 400
 * `bad_request` for a field that does not apply to the provider and for a new destination of an
 * integration with a header API key sent without `apiKey`; 400 `validation_error` (all problems in
 * `details`) for a blank name, `needs_attention`, too many subscriptions or an event the provider
 * does not take. Pure: it is computed again on a fresh read when a concurrent change landed.
 */
export function planUpdate(current: Integration, body: IntegrationUpdateInput): UpdatePlan {
  const crm = isCrmProvider(current.provider);
  if (body.dealSettings !== undefined && current.provider !== "crm_deals") {
    throw errors.badRequest("dealSettings applies only to crm_deals integrations.");
  }
  if (crm && body.defaultTargetUrl !== undefined) {
    throw errors.badRequest("defaultTargetUrl applies only to webhook integrations.");
  }
  if (crm && body.apiKey !== undefined)
    throw errors.badRequest("apiKey applies only to webhook integrations.");
  if (crm && body.subscriptions?.some((s) => s.targetUrl !== undefined && s.targetUrl !== null)) {
    throw errors.badRequest("A CRM subscription has no targetUrl.");
  }

  const details: ErrorDetail[] = [];
  const change: IntegrationChange = {};
  let empty = true;

  if (body.displayName !== undefined) {
    const name = body.displayName.trim();
    if (name.length === 0) details.push({ path: ["body", "displayName"], message: "must not be blank" });
    change.display_name = name;
    empty = false;
  }

  let statusAfter = current.status;
  if (body.status === "needs_attention") {
    if (current.status !== "needs_attention") {
      details.push({
        path: ["body", "status"],
        message: "needs_attention is set by the service; send connected or disabled",
      });
    }
  } else if (body.status !== undefined) {
    statusAfter = body.status;
    change.status = body.status;
    if (body.status === "connected") change.consecutive_failures = 0;
    empty = false;
  }

  if (body.dealSettings !== undefined) {
    const stored = current.dealSettings ?? { createDeals: false, pipelineId: null, stageId: null };
    change.deal_settings = JSON.stringify({ ...stored, ...body.dealSettings });
    empty = false;
  }

  const targetAfter = body.defaultTargetUrl ?? current.targetUrl;
  let repointTo: string | undefined;
  if (body.defaultTargetUrl !== undefined) {
    change.target_url = body.defaultTargetUrl;
    if (body.defaultTargetUrl !== current.targetUrl) repointTo = body.defaultTargetUrl;
    empty = false;
  }

  let subscriptions: SubscriptionValues[] | undefined;
  let subscriptionsAfter: readonly SubscriptionValues[] = current.subscriptions;
  if (body.subscriptions !== undefined) {
    subscriptions = mergeSubscriptions(body.subscriptions);
    if (subscriptions.length > MAX_SUBSCRIPTIONS) {
      details.push({
        path: ["body", "subscriptions"],
        message: `at most ${MAX_SUBSCRIPTIONS} subscriptions after merging duplicates (${subscriptions.length} sent)`,
      });
    }
    body.subscriptions.forEach((s, i) => {
      const refusal = eventRefusal(current.provider, s.eventType);
      if (refusal)
        details.push({ path: ["body", "subscriptions", String(i), "eventType"], message: refusal });
    });
    subscriptionsAfter = subscriptions;
    empty = false;
  } else if (body.defaultTargetUrl !== undefined) {
    subscriptionsAfter = current.subscriptions.map((s) => ({ ...s, targetUrl: null }));
  }

  if (details.length > 0) throw errors.validation("The integration update is not valid.", details);

  const destinationsAfter = destinationsOf(targetAfter, subscriptionsAfter);
  if (body.apiKey !== undefined) {
    change.api_key = body.apiKey;
    change.api_key_destinations = body.apiKey === null ? [] : destinationsAfter;
    empty = false;
  } else if (current.hasApiKey && (body.defaultTargetUrl !== undefined || body.subscriptions !== undefined)) {
    if (destinationsAfter.some((d) => !current.apiKeyDestinations.includes(d))) {
      throw errors.badRequest(
        "Re-pointing an integration with a header API key needs apiKey in the same request " +
          "(the key, to send it to the new destination, or null to remove it).",
      );
    }
    // The key stays with the destinations it was set for that remain; a removed one must be set again.
    change.api_key_destinations = current.apiKeyDestinations.filter((d) => destinationsAfter.includes(d));
  }

  const urls = new Set<string>();
  if (body.defaultTargetUrl !== undefined) urls.add(body.defaultTargetUrl);
  for (const s of subscriptions ?? []) if (s.targetUrl !== null) urls.add(s.targetUrl);

  return {
    empty,
    change,
    subscriptions,
    clearSubscriptionTargets: body.subscriptions === undefined && body.defaultTargetUrl !== undefined,
    repointTo,
    urls: [...urls],
    additions: {
      destinations: crm
        ? []
        : destinationsAfter.filter(
            (d) => !destinationsOf(current.targetUrl, current.subscriptions).includes(d),
          ),
      events: activeEvents(targetAfter, subscriptionsAfter).filter(
        (e) => !activeEvents(current.targetUrl, current.subscriptions).some((b) => sameEvent(b, e)),
      ),
      reEnabledFrom:
        statusAfter === "connected" && current.status !== "connected" ? current.status : undefined,
    },
  };
}

/**
 * The subscriptions sent, with defaults, one per event and own destination (a later duplicate
 * replaces an earlier one, in the earlier one's place).
 */
export function mergeSubscriptions(
  input: IntegrationUpdateInput["subscriptions"] & object,
): SubscriptionValues[] {
  const merged = new Map<string, SubscriptionValues>();
  for (const s of input) {
    const targetUrl = s.targetUrl ?? null;
    merged.set(subscriptionKey(s.eventType, targetUrl), {
      eventType: s.eventType,
      targetUrl,
      isActive: s.isActive ?? true,
      config: (s.config ?? {}) as Record<string, unknown>,
    });
  }
  return [...merged.values()];
}

/** Every URL an integration sends to: its `targetUrl` and the subscriptions' own ones. */
export function destinationsOf(
  targetUrl: string | null,
  subscriptions: readonly { targetUrl: string | null }[],
): string[] {
  const all = new Set<string>();
  if (targetUrl !== null) all.add(targetUrl);
  for (const s of subscriptions) if (s.targetUrl !== null) all.add(s.targetUrl);
  return [...all];
}

function activeEvents(
  targetUrl: string | null,
  subscriptions: readonly SubscriptionValues[],
): { eventType: EventType; destination: string | null }[] {
  return subscriptions
    .filter((s) => s.isActive)
    .map((s) => ({ eventType: s.eventType, destination: s.targetUrl ?? targetUrl }));
}

function sameEvent(
  a: { eventType: EventType; destination: string | null },
  b: { eventType: EventType; destination: string | null },
): boolean {
  return a.eventType === b.eventType && a.destination === b.destination;
}
