import { randomBytes } from "node:crypto";
import type { Db, DbOrTrx } from "../db/database.js";
import type { StoredChangeSource } from "../db/schema/integrations.js";
import type { EventType } from "../events/types.js";
import type { BodyOf, Caller } from "../http/contract.js";
import { ApiError, errors, type ErrorDetail } from "../http/errors.js";
import { OutboundRefusedError, type Outbound } from "../outbound/index.js";
import { addsSomething, planUpdate, type IntegrationUpdateInput } from "./changes.js";
import { describeKeyChange, recordOwnerNotice } from "./owner-notices.js";
import { eventRefusal, providerCatalog } from "./providers.js";
import type { CrmConfig } from "../config.js";
import { configuredCrms } from "./crm/availability.js";
import {
  clearSubscriptionTargets,
  countIntegrations,
  deleteIntegration as deleteIntegrationRow,
  findIntegration,
  insertIntegration,
  insertSubscriptions,
  keyStillActive,
  listIntegrations as listIntegrationRows,
  lockAccountIntegrations,
  providerTargetTaken,
  replaceSubscriptions,
  updateAtRevision,
  type Integration,
} from "./repository.js";

/** What the use cases that check destinations need. */
export interface IntegrationDeps {
  db: Db;
  outbound: Outbound;
}

/** At most this many integrations per account (the document's Limits). */
export const MAX_INTEGRATIONS = 25;

export type CreateWebhookInput = BodyOf<"createWebhookIntegration">;

const integrationExists = () =>
  new ApiError(409, "integration_exists", "An integration of this provider already sends to this targetUrl.");

/** The provider catalog of this deployment (a CRM is available when configured and built). */
export function listProviders(crm?: CrmConfig) {
  return providerCatalog(crm ? configuredCrms(crm) : new Set());
}

/** The account's integrations, newest first. */
export function listIntegrations(db: DbOrTrx, accountId: number): Promise<Integration[]> {
  return listIntegrationRows(db, accountId);
}

/** One integration of the account; 404 otherwise. */
export async function getIntegration(db: DbOrTrx, accountId: number, id: number): Promise<Integration> {
  const integration = await findIntegration(db, accountId, id);
  if (!integration) throw errors.notFound("Integration not found.");
  return integration;
}

/** A new signing secret: `whsec_` and 32 random bytes in base64url (43 characters). */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString("base64url")}`;
}

/**
 * Creates a webhook integration subscribed to its events, after every check that needs no write
 * (name, events, the outbound guard on `targetUrl`); then, with the account's integrations
 * locked, 409 `integration_exists` / `integration_limit`. The owner is told (owner-notices.ts).
 * The signing secret is returned here and never again.
 */
export async function createWebhookIntegration(
  deps: IntegrationDeps,
  caller: Caller,
  input: CreateWebhookInput,
): Promise<{ integration: Integration; signingSecret: string }> {
  const details: ErrorDetail[] = [];
  const displayName = input.displayName.trim();
  if (displayName.length === 0) details.push({ path: ["body", "displayName"], message: "must not be blank" });
  const events = [...new Set<EventType>(input.events)];
  input.events.forEach((eventType, i) => {
    const refusal = eventRefusal(input.provider, eventType);
    if (refusal && input.events.indexOf(eventType) === i) {
      details.push({ path: ["body", "events", String(i)], message: refusal });
    }
  });
  if (details.length > 0) throw errors.validation("The integration is not valid.", details);
  await checkDestinations(deps.outbound, [input.targetUrl]);

  const signingSecret = newSigningSecret();
  const integration = await deps.db.transaction().execute(async (trx) => {
    await lockAccountIntegrations(trx, caller.accountId);
    if (await providerTargetTaken(trx, caller.accountId, input.provider, input.targetUrl)) {
      throw integrationExists();
    }
    if ((await countIntegrations(trx, caller.accountId)) >= MAX_INTEGRATIONS) {
      throw new ApiError(
        409,
        "integration_limit",
        `An account can have at most ${MAX_INTEGRATIONS} integrations; delete one first.`,
      );
    }
    const id = await insertIntegration(trx, {
      accountId: caller.accountId,
      provider: input.provider,
      displayName,
      targetUrl: input.targetUrl,
      signingSecret,
      apiKey: input.apiKey ?? null,
      apiKeyDestinations: input.apiKey === undefined ? [] : [input.targetUrl],
      createdVia: changeSource(caller),
    });
    await insertSubscriptions(
      trx,
      caller.accountId,
      id,
      events.map((eventType) => ({ eventType, targetUrl: null, isActive: true, config: {} })),
    );
    await recordOwnerNotice(trx, {
      accountId: caller.accountId,
      kind: "change",
      summary: describeKeyChange({
        integration: { id, displayName, provider: input.provider },
        caller,
        action: "created",
        additions: {
          destinations: [input.targetUrl],
          events: events.map((eventType) => ({ eventType, destination: input.targetUrl })),
        },
      }),
    });
    return (await findIntegration(trx, caller.accountId, id))!;
  });
  return { integration, signingSecret };
}

/**
 * Applies a PATCH with the conflict rule: the change is computed on a read of the integration and
 * written only on top of the revision read; when another change landed meanwhile it is computed
 * and written once more on a fresh read, and when that fails too, 409 `conflict` with nothing
 * changed. The writing transaction holds the caller's key with a share lock: a key revoked
 * meanwhile gives 401 with nothing applied. An empty body (or a no-op `needs_attention`) writes
 * nothing and answers the integration as it is.
 */
export async function updateIntegration(
  deps: IntegrationDeps,
  caller: Caller,
  id: number,
  body: IntegrationUpdateInput,
): Promise<Integration> {
  const checked = new Set<string>();
  for (let attempt = 1; attempt <= 2; attempt += 1) {
    const current = await getIntegration(deps.db, caller.accountId, id);
    const plan = planUpdate(current, body);
    if (plan.empty) return current;
    const unchecked = plan.urls.filter((url) => !checked.has(url));
    await checkDestinations(deps.outbound, unchecked);
    for (const url of unchecked) checked.add(url);

    const written = await deps.db.transaction().execute(async (trx) => {
      if (caller.keyId !== null && !(await keyStillActive(trx, caller.keyId))) {
        throw errors.unauthorized("This API key has been revoked.");
      }
      if (plan.repointTo !== undefined) {
        await lockAccountIntegrations(trx, caller.accountId);
        if (await providerTargetTaken(trx, caller.accountId, current.provider, plan.repointTo, id)) {
          throw integrationExists();
        }
      }
      const applied = await updateAtRevision(
        trx,
        caller.accountId,
        id,
        current.revision,
        plan.change,
        changeSource(caller),
      );
      if (!applied) return undefined;
      if (plan.subscriptions) await replaceSubscriptions(trx, caller.accountId, id, plan.subscriptions);
      else if (plan.clearSubscriptionTargets) await clearSubscriptionTargets(trx, id);
      if (addsSomething(plan.additions)) {
        await recordOwnerNotice(trx, {
          accountId: caller.accountId,
          kind: "change",
          summary: describeKeyChange({
            integration: {
              id,
              displayName: plan.change.display_name ?? current.displayName,
              provider: current.provider,
            },
            caller,
            action: "changed",
            additions: plan.additions,
          }),
        });
      }
      return findIntegration(trx, caller.accountId, id);
    });
    if (written) return written;
  }
  throw errors.conflict(
    "The integration changed twice while this update was applied; nothing was changed. Read it and try again.",
  );
}

/** Deletes an integration of the account with its subscriptions and deliveries; 404 otherwise. */
export async function deleteIntegration(db: DbOrTrx, accountId: number, id: number): Promise<void> {
  if (!(await deleteIntegrationRow(db, accountId, id))) throw errors.notFound("Integration not found.");
}

function changeSource(caller: Caller): StoredChangeSource {
  return { channel: caller.channel, apiKeyId: caller.keyId };
}

/** The outbound guard on destinations as they are saved: a refusal is 400 `bad_request` naming why. */
async function checkDestinations(outbound: Outbound, urls: readonly string[]): Promise<void> {
  const results = await Promise.allSettled(urls.map((url) => outbound.checkDestination(url)));
  for (const result of results) {
    if (result.status === "fulfilled") continue;
    if (result.reason instanceof OutboundRefusedError) {
      throw errors.badRequest(`The destination is refused: ${result.reason.reason}.`);
    }
    throw result.reason;
  }
}
