import type { CrmProviderId } from "../providers.js";
import type { CrmAdapter } from "./adapter.js";
import { contactsAdapter } from "./contacts-adapter.js";
import { dealsAdapter } from "./deals-adapter.js";
import { leadsAdapter } from "./leads-adapter.js";

/** The adapters built so far, by provider (docs/integrations.md, "CRMs"). */
const ADAPTERS: Partial<Record<CrmProviderId, CrmAdapter>> = {
  crm_contacts: contactsAdapter,
  crm_leads: leadsAdapter,
  crm_deals: dealsAdapter,
};

/** The adapter of a CRM; undefined while it is not built. */
export function adapterFor(provider: string): CrmAdapter | undefined {
  return ADAPTERS[provider as CrmProviderId];
}
