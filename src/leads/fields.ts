import type { LeadsTable } from "../db/schema/leads.js";

/**
 * What kind of value a field holds in the API's Lead: `list` is an array of strings (nullable only
 * for `aiCategoryEstimation`), `timestamp` an ISO 8601 date-time, `date` a `YYYY-MM-DD` date,
 * `object` a JSON object of strings.
 */
export type LeadFieldType =
  "integer" | "number" | "boolean" | "text" | "list" | "timestamp" | "date" | "object";

/** A lead field as clients name it. */
export interface LeadField {
  /** The API's camelCase name. */
  name: string;
  /** The database-style name used in stored snapshots, accepted wherever a client names a field. */
  alias: string;
  /** The column it is read from; null for fields derived from others. */
  column: keyof LeadsTable | null;
  type: LeadFieldType;
  /** Single-valued fields can be sorted on. */
  sortable: boolean;
}

const f = (
  name: string,
  alias: string,
  column: keyof LeadsTable | null,
  type: LeadFieldType = "text",
  sortable = column !== null && type !== "list" && type !== "object",
): LeadField => ({
  name,
  alias,
  column,
  type,
  sortable,
});

/**
 * Every field of a lead (search results and exports), in the order of the default export columns.
 * `website` is the registered URL or, without one, the crawled URL; `address` is the street line.
 */
export const LEAD_FIELDS: readonly LeadField[] = [
  f("id", "wId", "id", "integer"),
  f("companyName", "wCompanyName", "company_name"),
  f("website", "wWebsite", null),
  f("registeredUrl", "wRegisteredUrl", "registered_url"),
  f("crawledUrl", "wCrawledUrl", "crawled_url"),
  f("email", "wEmailPrimary", "email"),
  f("emailSecondary", "wEmailSecondary", "email_secondary"),
  f("emailTier1", "wEmailTier1", "email_tier1"),
  f("emailTier2", "wEmailTier2", "email_tier2"),
  f("emailTier3", "wEmailTier3", "email_tier3"),
  f("emailTier4", "wEmailTier4", "email_tier4"),
  f("emailTier5", "wEmailTier5", "email_tier5"),
  f("emailTier6", "wEmailTier6", "email_tier6"),
  f("phone", "wPhonePrimary", "phone"),
  f("phoneSecondary", "wPhoneSecondary", "phone_secondary"),
  f("phoneTotal", "wPhoneTotal", null, "integer"),
  f("address", "wAddress", "street"),
  f("street", "wStreet", "street"),
  f("city", "wCity", "city"),
  f("state", "wState", "state"),
  f("zip", "wZip", "zip"),
  f("country", "wCountry", "country"),
  f("category", "wCategory", "category"),
  f("description", "wDescription", "description"),
  f("longDescription", "wLongDescription", "long_description"),
  f("aiCategoryEstimation", "wAiCategoryEstimation", "ai_category_estimation", "list"),
  f("stars", "wStars", "stars", "number"),
  f("reviewCount", "wReviewCount", "review_count", "integer"),
  f("websiteSchemaTypes", "wWebsiteSchemaTypes", "website_schema_types", "list"),
  f("lastBuyingSignal", "wLastBuyingSignal", "last_buying_signal", "timestamp"),
  f("buyingSignalType", "wBuyingSignalType", "buying_signal_type", "list"),
  f("lastUpdated", "wLastUpdated", "last_updated", "timestamp"),
  f("employees", "wEmployees", "employees", "integer"),
  f("foundedDate", "wFoundedDate", "founded_date", "date"),
  f("numberOfLocations", "wNumberOfLocations", "number_of_locations", "integer"),
  f("isChain", "wIsChain", "is_chain", "boolean"),
  f("priceRange", "wPriceRange", "price_range"),
  f("legalName", "wLegalName", "legal_name"),
  f("naicsCode", "wNaicsCode", "naics_code"),
  f("founders", "wFounders", "founders", "list"),
  f("openingHours", "wOpeningHours", "opening_hours"),
  f("socialProfiles", "wSocialProfiles", "social_profiles", "object"),
  f("webTechnologies", "wWebTechnologies", "web_technologies", "list"),
  f("databaseType", "wDatabaseType", null),
];

const byName = new Map<string, LeadField>();
for (const field of LEAD_FIELDS) {
  byName.set(field.name.toLowerCase(), field);
  byName.set(field.alias.toLowerCase(), field);
}

/** The field a client named, by its camelCase name or database-style alias (any case); undefined if none. */
export function resolveLeadField(name: string): LeadField | undefined {
  return byName.get(name.trim().toLowerCase());
}
