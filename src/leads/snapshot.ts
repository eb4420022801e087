import { LEAD_FIELDS } from "./fields.js";
import type { LeadRecord } from "./lead.js";
import { toLead } from "./presenter.js";

/**
 * A lead as stored in lead export history (`leadSnapshot`): every field of the API's Lead under
 * its database-style name (`wCompanyName`, `wPhonePrimary`, `wEmailPrimary`, ... the aliases of
 * `fields.ts`), values as the API gives them (dates as ISO strings).
 */
export type LeadSnapshot = Record<string, unknown>;

/** The stored snapshot of a lead. */
export function toLeadSnapshot(lead: LeadRecord): LeadSnapshot {
  const api = toLead(lead) as unknown as Record<string, unknown>;
  const snapshot: LeadSnapshot = {};
  for (const field of LEAD_FIELDS) snapshot[field.alias] = api[field.name] ?? null;
  return snapshot;
}
