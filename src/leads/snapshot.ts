import { compileShape } from "./compiled-shape.js";
import { LEAD_FIELDS } from "./fields.js";
import type { LeadRecord } from "./lead.js";
import { apiValueCode, LEAD_SHAPE_HELPERS } from "./presenter.js";

/**
 * A lead as stored in lead export history (`leadSnapshot`): every field of the API's Lead under
 * its database-style name (`wCompanyName`, `wPhonePrimary`, `wEmailPrimary`, ... the aliases of
 * `fields.ts`), values as the API gives them (dates as ISO strings).
 */
export type LeadSnapshot = Record<string, unknown>;

/**
 * The stored snapshot of a lead: the API's Lead (the values toLead gives) under the aliases of
 * `fields.ts`, in its order, built straight from the LeadRecord by one object literal compiled
 * once from the catalogue: a refresh builds 5,000 of them, and a literal is built 3-5 times faster
 * than the same object filled key by key (docs/performance.md, 2026-11-24 "Refresh within 2x of
 * an export"; docs/leads.md "Shapes compiled once").
 */
export const toLeadSnapshot: (lead: LeadRecord) => LeadSnapshot = compileShape(
  "toLeadSnapshot",
  LEAD_FIELDS.map((field) => [field.alias, apiValueCode(field)] as const),
  LEAD_SHAPE_HELPERS,
);
