import type { components } from "../../generated/api.js";
import { compileShape, member, type ShapeMember } from "./compiled-shape.js";
import { resolveLeadField } from "./fields.js";
import type { LeadRecord } from "./lead.js";
import { apiValueCode, LEAD_SHAPE_HELPERS } from "./presenter.js";

/** The flat lead of the lead events (`LeadSummary`). */
export type LeadSummary = components["schemas"]["LeadSummary"];

/** The summary's value of the lead field `name`, as the API's Lead has it (toLead). */
function field(name: string): string {
  const found = resolveLeadField(name);
  if (!found) throw new Error(`unknown lead field ${name}`);
  return apiValueCode(found, "v.lead");
}

/** The summary's members, in the document's order; `source` is the channel. */
const MEMBERS: readonly ShapeMember[] = [
  ["id", field("id")],
  ["databaseType", field("databaseType")],
  ["source", member("v", "source")],
  ...[
    "companyName",
    "website",
    "email",
    "emailSecondary",
    "emailTier1",
    "emailTier2",
    "emailTier3",
    "emailTier4",
    "emailTier5",
    "emailTier6",
    "phone",
    "phoneSecondary",
    "phoneTotal",
    "address",
    "city",
    "state",
    "zip",
    "country",
    "category",
    "description",
    "lastBuyingSignal",
    "buyingSignalType",
  ].map((name) => [name, field(name)] as const),
  ["lastUpdated", field("lastBuyingSignal")],
  ["lastUpdatedReason", field("buyingSignalType")],
];

const summaryShape = compileShape<{ lead: LeadRecord; source: LeadSummary["source"] }, LeadSummary>(
  "toLeadSummary",
  MEMBERS,
  LEAD_SHAPE_HELPERS,
);

/**
 * A lead as lead events carry it: the document's flat summary, with `source` the channel it
 * reached the account through. `lastUpdated` / `lastUpdatedReason` repeat `lastBuyingSignal` /
 * `buyingSignalType` under their older names; values are the API Lead's (toLead), computed from
 * the field catalogue.
 */
export function toLeadSummary(lead: LeadRecord, source: LeadSummary["source"]): LeadSummary {
  return summaryShape({ lead, source });
}
