import type { components } from "../../generated/api.js";
import { leadPhoneTotal, leadWebsite, type LeadRecord } from "./lead.js";

/** The API's Lead (search, preview, export). */
export type ApiLead = components["schemas"]["Lead"];

/** The contact fields a preview masks on leads the account has not received. */
export const MASKED_PHONE_FIELDS = ["phone", "phoneSecondary"] as const;
export const MASKED_EMAIL_FIELDS = [
  "email",
  "emailSecondary",
  "emailTier1",
  "emailTier2",
  "emailTier3",
  "emailTier4",
  "emailTier5",
  "emailTier6",
] as const;

/**
 * The API's Lead: every field present, a value the database lacks is null, lists are empty
 * arrays (`aiCategoryEstimation` stays null while not classified). `website` is the registered
 * URL or, without one, the crawled URL; `address` is the street line; `phoneTotal` counts phones.
 */
export function toLead(lead: LeadRecord): ApiLead {
  return {
    id: lead.id,
    databaseType: "other",
    companyName: lead.companyName,
    website: leadWebsite(lead),
    registeredUrl: lead.registeredUrl,
    crawledUrl: lead.crawledUrl,
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
    street: lead.street,
    city: lead.city,
    state: lead.state,
    zip: lead.zip,
    country: lead.country,
    category: lead.category,
    description: lead.description,
    longDescription: lead.longDescription,
    aiCategoryEstimation: lead.aiCategoryEstimation,
    stars: lead.stars,
    reviewCount: lead.reviewCount,
    websiteSchemaTypes: lead.websiteSchemaTypes,
    lastBuyingSignal: lead.lastBuyingSignal?.toISOString() ?? null,
    buyingSignalType: lead.buyingSignalType,
    lastUpdated: lead.lastUpdated?.toISOString() ?? null,
    employees: lead.employees,
    foundedDate: lead.foundedDate,
    numberOfLocations: lead.numberOfLocations,
    isChain: lead.isChain,
    priceRange: lead.priceRange,
    legalName: lead.legalName,
    naicsCode: lead.naicsCode,
    founders: lead.founders,
    openingHours: lead.openingHours,
    // The generated type reads `unevaluatedProperties: string` as Record<string, never>.
    socialProfiles: lead.socialProfiles as ApiLead["socialProfiles"],
    webTechnologies: lead.webTechnologies,
  };
}

/**
 * Masks a phone number, keeping the area code and the last two digits: `(512) 555-0142` ->
 * `(512) ***-**42`. Numbers with a leading US country code keep the area code after it; a number
 * with fewer than 7 digits becomes `***`.
 */
export function maskPhone(phone: string | null): string | null {
  if (phone === null) return null;
  let digits = phone.replace(/\D/g, "");
  if (digits.length === 11 && digits.startsWith("1")) digits = digits.slice(1);
  if (digits.length < 7) return "***";
  return `(${digits.slice(0, 3)}) ***-**${digits.slice(-2)}`;
}

/**
 * Masks an e-mail address, keeping the first three characters of the local part and the domain:
 * `hello@domain.com` -> `hel*@domain.com` (a shorter local part keeps its first character).
 */
export function maskEmail(email: string | null): string | null {
  if (email === null) return null;
  const at = email.lastIndexOf("@");
  if (at <= 0) return "***";
  const local = email.slice(0, at);
  const keep = local.length > 3 ? 3 : Math.max(1, local.length - 1);
  return `${local.slice(0, keep)}*${email.slice(at)}`;
}

/** The Lead with its contact fields masked (preview of a lead the account has not received). */
export function toMaskedLead(lead: LeadRecord): ApiLead {
  const out = toLead(lead);
  for (const field of MASKED_PHONE_FIELDS) out[field] = maskPhone(out[field]);
  for (const field of MASKED_EMAIL_FIELDS) out[field] = maskEmail(out[field]);
  return out;
}
