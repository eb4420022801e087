import { LEAD_FIELDS } from "./fields.js";
import type { LeadRecord } from "./lead.js";
import { toLead, type ApiLead } from "./presenter.js";

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

const LIST_FIELDS = new Set(["websiteSchemaTypes", "buyingSignalType", "founders", "webTechnologies"]);

/**
 * The API's Lead from a stored snapshot (the inverse of toLeadSnapshot). Tolerant of older
 * snapshots: a field may also be stored under its camelCase name; a missing field is null (lists
 * empty, `socialProfiles` `{}`, `phoneTotal` counted from the phones, `databaseType` `other`).
 */
export function leadFromSnapshot(snapshot: LeadSnapshot): ApiLead {
  const out: Record<string, unknown> = {};
  for (const field of LEAD_FIELDS) {
    let value = snapshot[field.alias] !== undefined ? snapshot[field.alias] : snapshot[field.name];
    if (value === undefined) value = null;
    if (LIST_FIELDS.has(field.name) && !Array.isArray(value)) value = [];
    out[field.name] = value;
  }
  if (out.socialProfiles === null || typeof out.socialProfiles !== "object") out.socialProfiles = {};
  out.databaseType = "other";
  if (typeof out.phoneTotal !== "number") out.phoneTotal = (out.phone ? 1 : 0) + (out.phoneSecondary ? 1 : 0);
  if (out.website === null) out.website = out.registeredUrl ?? out.crawledUrl ?? null;
  if (out.address === null) out.address = out.street ?? null;
  if (out.street === null) out.street = out.address ?? null;
  return out as unknown as ApiLead;
}
