import { createHash, randomBytes } from "node:crypto";
import type { Caller } from "../../http/contract.js";
import { ApiError, errors } from "../../http/errors.js";
import { OutboundRefusedError } from "../../outbound/index.js";
import { describeKeyChange, recordOwnerNotice } from "../owner-notices.js";
import { isCrmProvider, providerById, type CrmProviderId } from "../providers.js";
import {
  countIntegrations,
  insertSubscriptions,
  keyStillActive,
  lockAccountIntegrations,
} from "../repository.js";
import { MAX_INTEGRATIONS, newSigningSecret } from "../service.js";
import type { CrmEnvironment } from "./adapter.js";
import { crmUnavailable, usableCrm } from "./availability.js";
import { CrmApiError } from "./errors.js";
import type { CallbackPage } from "./pages.js";
import {
  findCrmIntegration,
  hasProviderIntegration,
  insertCrmIntegration,
  insertOAuthState,
  renewCrmIntegration,
  sessionStillLive,
  takeOAuthState,
  type OAuthState,
} from "./repository.js";
import { redirectUri, type CrmRuntime } from "./runtime.js";

/** A connect link works for 10 minutes. */
export const CONNECT_LINK_MS = 10 * 60_000;

/** The events a new CRM integration receives (the real service's defaults). */
const DEFAULT_SUBSCRIPTIONS: Record<
  CrmProviderId,
  { eventType: "lead.created" | "lead.updated"; isActive: boolean }[]
> = {
  crm_contacts: [
    { eventType: "lead.created", isActive: true },
    { eventType: "lead.updated", isActive: false },
  ],
  crm_leads: [{ eventType: "lead.created", isActive: true }],
  crm_deals: [
    { eventType: "lead.created", isActive: true },
    { eventType: "lead.updated", isActive: true },
  ],
};

function hashState(state: string): string {
  return createHash("sha256").update(state).digest("hex");
}

const integrationLimit = () =>
  new ApiError(
    409,
    "integration_limit",
    `An account can have at most ${MAX_INTEGRATIONS} integrations; delete one first.`,
  );

/**
 * `POST /integrations/{provider}/connect`: a single-use authorization link of 10 minutes, bound to
 * the account and the API key or dashboard session that asked for it (its `state` is stored
 * hashed with them), with a PKCE challenge where
 * the CRM takes one. 404 for anything but a CRM id, 503 for a CRM not configured here, 400 for
 * `sandbox` on another CRM than `crm_leads`, 409 when the account is full and has no integration
 * of this CRM to renew.
 */
export async function startConnect(
  runtime: CrmRuntime,
  caller: Caller,
  provider: string,
  environment: CrmEnvironment | undefined,
): Promise<{ provider: CrmProviderId; authorizationUrl: string; expiresAt: Date }> {
  if (!isCrmProvider(provider)) throw errors.notFound(`Unknown CRM provider: ${provider}.`);
  const usable = usableCrm(runtime.config, provider);
  if (!usable) throw crmUnavailable(provider);
  if (environment === "sandbox" && provider !== "crm_leads") {
    const message = "environment sandbox is for crm_leads only";
    throw errors.validation(message, [{ path: ["body", "environment"], message }]);
  }
  if (
    (await countIntegrations(runtime.db, caller.accountId)) >= MAX_INTEGRATIONS &&
    !(await hasProviderIntegration(runtime.db, caller.accountId, provider))
  ) {
    throw integrationLimit();
  }
  const state = randomBytes(32).toString("base64url");
  const codeVerifier = usable.adapter.pkce ? randomBytes(48).toString("base64url") : null;
  const expiresAt = new Date(Date.now() + CONNECT_LINK_MS);
  await insertOAuthState(runtime.db, hashState(state), {
    accountId: caller.accountId,
    // Bound to the key, or to the dashboard's session: the callback checks it is still valid.
    apiKeyId: caller.keyId,
    sessionId: caller.keyId === null ? Number(caller.sessionId) : null,
    provider,
    environment: environment ?? "production",
    codeVerifier,
    expiresAt,
  });
  const authorizationUrl = usable.adapter.authorizationUrl(usable.client, {
    state,
    redirectUri: redirectUri(runtime),
    environment: environment ?? "production",
    ...(codeVerifier ? { codeChallenge: createHash("sha256").update(codeVerifier).digest("base64url") } : {}),
  });
  return { provider, authorizationUrl, expiresAt };
}

const invalidState: CallbackPage = {
  status: 400,
  title: "This link is not valid",
  message: "The authorization link is unknown, was already used or has expired. Start connecting again.",
  code: "invalid_state",
};

/**
 * `GET /integrations/oauth/callback`: takes the state (single use), then, unless the user refused,
 * exchanges the code through the CRM's token endpoint and creates the integration (default events,
 * the owner told) or renews the one of the same CRM account. A state whose API key was revoked
 * since connect connects nothing (`key_revoked`), also when the revocation lands during the
 * exchange: the writing transaction holds the key with a share lock.
 */
export async function finishConnect(
  runtime: CrmRuntime,
  query: { code?: string; state?: string; error?: string; error_description?: string },
): Promise<CallbackPage> {
  const stored = query.state ? await takeOAuthState(runtime.db, hashState(query.state)) : undefined;
  if (!stored || stored.expiresAt.getTime() <= Date.now() || !isCrmProvider(stored.provider))
    return invalidState;
  const provider = stored.provider;
  const name = providerById(provider)?.name ?? provider;
  if (query.error !== undefined || !query.code) {
    const why = query.error_description ?? query.error ?? "no authorization code was returned";
    return {
      status: 200,
      title: `${name} was not connected`,
      message: `The CRM said: ${why}.`,
      code: query.error ?? "no_code",
    };
  }
  const usable = usableCrm(runtime.config, provider);
  if (!usable) {
    return {
      status: 200,
      title: `${name} was not connected`,
      message: "This CRM is not configured for this deployment.",
      code: "provider_unavailable",
    };
  }
  const revoked: CallbackPage =
    stored.apiKeyId === null
      ? {
          status: 400,
          title: `${name} was not connected`,
          message:
            "The dashboard session that started this connection has ended since (signed out or expired). Sign in and start again.",
          code: "session_ended",
        }
      : {
          status: 400,
          title: `${name} was not connected`,
          message:
            "The API key that started this connection has been revoked since. Start again with a valid key.",
          code: "key_revoked",
        };
  if (!(await callerActive(runtime, stored))) return revoked;

  let exchanged;
  try {
    exchanged = await usable.adapter.exchangeCode(usable.client, runtime.agentFor, {
      code: query.code,
      redirectUri: redirectUri(runtime),
      environment: stored.environment,
      checkApiBase: runtime.checkApiBase,
      ...(stored.codeVerifier ? { codeVerifier: stored.codeVerifier } : {}),
    });
    await runtime.outbound.checkDestination(exchanged.grant.apiBase);
  } catch (err) {
    if (err instanceof CrmApiError || err instanceof OutboundRefusedError) {
      const why = err instanceof CrmApiError ? err.message : err.reason;
      return {
        status: 200,
        title: `${name} was not connected`,
        message: `The CRM failed: ${why}.`,
        code: "provider_error",
      };
    }
    throw err;
  }
  const { grant, account } = exchanged;
  const metadata =
    provider === "crm_leads" ? { ...account.metadata, environment: stored.environment } : account.metadata;

  return runtime.db.transaction().execute(async (trx): Promise<CallbackPage> => {
    // The key (or session) is read again with a share lock: a revocation or sign-out landing
    // during the exchange either waits for this commit or is seen here.
    let caller: { keyPrefix: string | null; keyName: string | null };
    if (stored.apiKeyId !== null) {
      const key = await trx
        .selectFrom("api_keys")
        .select(["key_prefix", "name", "revoked_at"])
        .where("id", "=", stored.apiKeyId)
        .executeTakeFirst();
      if (!key || !(await keyStillActive(trx, stored.apiKeyId))) return revoked;
      caller = { keyPrefix: key.key_prefix, keyName: key.name };
    } else {
      if (stored.sessionId === null || !(await sessionStillLive(trx, stored.sessionId, true))) return revoked;
      caller = { keyPrefix: null, keyName: null };
    }
    await lockAccountIntegrations(trx, stored.accountId);
    const values = {
      accountId: stored.accountId,
      provider,
      displayName: account.displayName,
      externalAccountId: account.externalAccountId,
      metadata,
      tokenExpiresAt: grant.expiresAt,
      accessToken: runtime.cipher.encrypt(grant.accessToken),
      refreshToken: runtime.cipher.encrypt(grant.refreshToken),
      apiBase: grant.apiBase,
      signingSecret: newSigningSecret(),
      source:
        stored.apiKeyId === null
          ? { channel: "dashboard" as const, apiKeyId: null }
          : { channel: "api" as const, apiKeyId: stored.apiKeyId },
    };
    const existing = await findCrmIntegration(
      trx,
      stored.accountId,
      provider,
      account.externalAccountId,
      stored.environment,
    );
    let id: number;
    if (existing !== undefined) {
      id = existing;
      await renewCrmIntegration(trx, id, values);
    } else {
      if ((await countIntegrations(trx, stored.accountId)) >= MAX_INTEGRATIONS) {
        return {
          status: 200,
          title: `${name} was not connected`,
          message: `The account already has ${MAX_INTEGRATIONS} integrations; delete one first.`,
          code: "integration_limit",
        };
      }
      id = await insertCrmIntegration(trx, values);
      await insertSubscriptions(
        trx,
        stored.accountId,
        id,
        DEFAULT_SUBSCRIPTIONS[provider].map((s) => ({ ...s, targetUrl: null, config: {} })),
      );
    }
    await recordOwnerNotice(trx, {
      accountId: stored.accountId,
      kind: "change",
      summary: describeKeyChange({
        integration: { id, displayName: account.displayName, provider },
        caller,
        action: existing !== undefined ? "changed" : "created",
        additions: {
          destinations: [],
          events:
            existing !== undefined
              ? []
              : DEFAULT_SUBSCRIPTIONS[provider]
                  .filter((s) => s.isActive)
                  .map((s) => ({ eventType: s.eventType, destination: null })),
        },
      }),
    });
    return {
      status: 200,
      title: `${name} is connected`,
      message: `${account.displayName} is connected as integration ${id}. You can close this page.`,
      code: "connected",
    };
  });
}

/** Whether the key that asked for the link is not revoked, or its dashboard session is live. */
async function callerActive(runtime: CrmRuntime, stored: OAuthState): Promise<boolean> {
  if (stored.apiKeyId === null) {
    return stored.sessionId !== null && (await sessionStillLive(runtime.db, stored.sessionId));
  }
  const row = await runtime.db
    .selectFrom("api_keys")
    .select("revoked_at")
    .where("id", "=", stored.apiKeyId)
    .executeTakeFirst();
  return row !== undefined && row.revoked_at === null;
}
