import type { components } from "../../generated/api.js";
import { providerById, type providerCatalog } from "./providers.js";
import type { ChangeSource, Integration } from "./repository.js";

type Schemas = components["schemas"];
export type IntegrationBody = Schemas["Integration"];
export type IntegrationProviderBody = Schemas["IntegrationProvider"];

/** The API's shape of an integration (never its signing secret or header API key). */
export function toIntegrationBody(integration: Integration): IntegrationBody {
  const provider = providerById(integration.provider);
  return {
    id: integration.id,
    provider: integration.provider,
    providerName: provider?.name ?? integration.provider,
    status: integration.status,
    displayName: integration.displayName,
    externalAccountId: integration.externalAccountId,
    authMethod: provider?.authMethod ?? "hmac",
    metadata: integration.metadata as IntegrationBody["metadata"],
    consecutiveFailures: integration.consecutiveFailures,
    lastFailureAt: iso(integration.lastFailureAt),
    lastSuccessAt: iso(integration.lastSuccessAt),
    tokenExpiresAt: iso(integration.tokenExpiresAt),
    createdAt: integration.createdAt.toISOString(),
    updatedAt: integration.updatedAt.toISOString(),
    createdVia: toChangeSource(integration.createdVia),
    lastChangedVia: toChangeSource(integration.lastChangedVia),
    lastChangedAt: iso(integration.lastChangedAt),
    subscriptions: integration.subscriptions.map((s) => ({
      id: s.id,
      eventType: s.eventType,
      targetUrl: s.targetUrl,
      isActive: s.isActive,
      config: s.config as Schemas["IntegrationSubscription"]["config"],
    })),
    targetUrl: integration.targetUrl,
    hasApiKey: integration.hasApiKey,
    dealSettings: integration.dealSettings as IntegrationBody["dealSettings"],
  };
}

function toChangeSource(source: ChangeSource | null): Schemas["IntegrationChangeSource"] | null {
  if (!source) return null;
  return {
    channel: source.channel,
    apiKey: source.apiKey && {
      id: source.apiKey.id,
      keyPrefix: source.apiKey.keyPrefix,
      name: source.apiKey.name,
      revoked: source.apiKey.revoked,
    },
  };
}

/** The API's shape of a catalog entry. */
export function toProviderBody(entry: ReturnType<typeof providerCatalog>[number]): IntegrationProviderBody {
  const body: IntegrationProviderBody = {
    id: entry.id,
    name: entry.name,
    tagline: entry.tagline,
    description: entry.description,
    authMethod: entry.authMethod,
    ownerSetupRequired: entry.ownerSetupRequired,
    defaultEvents: [...entry.defaultEvents],
    supportsPerLeadPush: entry.supportsPerLeadPush,
    helpText: entry.helpText,
    available: entry.available,
  };
  if (entry.setupHelpUrl !== undefined) body.setupHelpUrl = entry.setupHelpUrl;
  if (entry.reason !== undefined) body.reason = entry.reason;
  return body;
}

function iso(date: Date | null): string | null {
  return date ? date.toISOString() : null;
}
