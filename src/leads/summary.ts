import type { components } from "../../generated/api.js";
import { leadPhoneTotal, leadWebsite, type LeadRecord } from "./lead.js";

/** The flat lead of the lead events (`LeadSummary`). */
export type LeadSummary = components["schemas"]["LeadSummary"];

/**
 * A lead as lead events carry it: the document's flat summary, with `source` the channel it
 * reached the account through. `lastUpdated` / `lastUpdatedReason` repeat `lastBuyingSignal` /
 * `buyingSignalType` under their older names; fields are the API Lead's (toLead).
 */
export function toLeadSummary(lead: LeadRecord, source: LeadSummary["source"]): LeadSummary {
  const signal = lead.lastBuyingSignal?.toISOString() ?? null;
  return {
    id: lead.id,
    databaseType: "other",
    source,
    companyName: lead.companyName,
    website: leadWebsite(lead),
    email: lead.email,
    emailSecondary: lead.emailSecondary,
    emailTier1: lead.emailTier1,
    emailTier2: lead.emailTier2,
    emailTier3: lead.emailTier3,
    emailTier4: lead.emailTier4,
    emailTier5: lead.emailTier5,
    emailTier6: lead.emailTier6,
    phone: lead.phone,
    phoneSecondary: lead.phoneSecondary,
    phoneTotal: leadPhoneTotal(lead),
    address: lead.street,
    city: lead.city,
    state: lead.state,
    zip: lead.zip,
    country: lead.country,
    category: lead.category,
    description: lead.description,
    lastBuyingSignal: signal,
    buyingSignalType: lead.buyingSignalType,
    lastUpdated: signal,
    lastUpdatedReason: lead.buyingSignalType,
  };
}
