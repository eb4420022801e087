import type { components } from "../../../generated/api.js";
import type { CrmProviderId } from "../providers.js";

export type CrmMappingScope = components["schemas"]["CrmMappingScope"];
export type CrmFieldMapping = components["schemas"]["CrmFieldMapping"];
export type CrmFieldMappingEntry = components["schemas"]["CrmFieldMappingEntry"];
export type CrmField = components["schemas"]["CrmField"];

/** The mapping scopes of each CRM, in the order answers list them. */
export const SCOPES: Record<CrmProviderId, readonly CrmMappingScope[]> = {
  crm_contacts: ["contact", "company"],
  crm_leads: ["lead"],
  crm_deals: ["person", "organization", "deal"],
};

/** Names of the scopes for people. */
export const SCOPE_LABELS: Record<CrmMappingScope, string> = {
  contact: "Contacts",
  company: "Companies",
  lead: "Leads",
  person: "Persons",
  organization: "Organizations",
  deal: "Deals",
};

/** A saved mapping with every scope of the CRM (an absent scope is empty). */
export function fullMapping(provider: CrmProviderId, stored: Record<string, unknown>): CrmFieldMapping {
  const out: CrmFieldMapping = {};
  for (const scope of SCOPES[provider]) {
    const list = stored[scope];
    out[scope] = Array.isArray(list) ? (list as CrmFieldMappingEntry[]) : [];
  }
  return out;
}

/**
 * The properties of a record: the defaults, then each mapped lead field that has a value
 * (a mapping overrides a default of the same CRM field).
 */
export function withMapping(
  defaults: Record<string, string | undefined>,
  entries: readonly CrmFieldMappingEntry[],
  values: Record<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(defaults)) if (value !== undefined) out[name] = value;
  for (const entry of entries) {
    const value = values[entry.smbFieldId];
    if (value !== undefined) out[entry.targetField] = value;
  }
  return out;
}
