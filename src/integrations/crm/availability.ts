import type { CrmClientConfig, CrmConfig } from "../../config.js";
import { ApiError } from "../../http/errors.js";
import type { CrmProviderId } from "../providers.js";
import type { CrmAdapter } from "./adapter.js";
import { adapterFor } from "./adapters.js";
import { crmClient } from "./runtime.js";

const CRM_IDS: readonly CrmProviderId[] = ["crm_contacts", "crm_leads", "crm_deals"];

/** A CRM is usable when its client id and secret (and the token key) are configured and its adapter is built. */
export function usableCrm(
  config: CrmConfig,
  provider: CrmProviderId,
): { adapter: CrmAdapter; client: CrmClientConfig } | undefined {
  const adapter = adapterFor(provider);
  const client = crmClient(config, provider);
  return adapter && client ? { adapter, client } : undefined;
}

/** The CRMs this deployment can use (the provider catalog's `available`). */
export function configuredCrms(config: CrmConfig): Set<CrmProviderId> {
  return new Set(CRM_IDS.filter((id) => usableCrm(config, id) !== undefined));
}

/** 503 `provider_unavailable`: a CRM that is not configured for this deployment (no Retry-After). */
export function crmUnavailable(provider: string): ApiError {
  return new ApiError(
    503,
    "provider_unavailable",
    `The ${provider} provider is not configured for this deployment; do not retry.`,
  );
}
