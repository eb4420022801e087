import type { LeadsTable } from "../db/schema/leads.js";

/** A lead field as clients name it. */
export interface LeadField {
  /** The API's camelCase name. */
  name: string;
  /** The database-style name used in stored snapshots, accepted wherever a client names a field. */
  alias: string;
  /** The column it is read from; null for fields derived from others. */
  column: keyof LeadsTable | null;
  /** Single-valued fields can be sorted on. */
  sortable: boolean;
}

const f = (
  name: string,
  alias: string,
  column: keyof LeadsTable | null,
  sortable = column !== null,
): LeadField => ({
  name,
  alias,
  column,
  sortable,
});

/**
 * Every field of a lead (search results and exports), in the order of the default export columns.
 * `website` is the registered URL or, without one, the crawled URL; `address` is the street line.
 */
export const LEAD_FIELDS: readonly LeadField[] = [
  f("id", "wId", "id"),
  f("companyName", "wCompanyName", "company_name"),
  f("website", "wWebsite", null, false),
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
  f("phoneTotal", "wPhoneTotal", null, false),
  f("address", "wAddress", "street"),
  f("street", "wStreet", "street"),
  f("city", "wCity", "city"),
  f("state", "wState", "state"),
  f("zip", "wZip", "zip"),
  f("country", "wCountry", "country"),
  f("category", "wCategory", "category"),
  f("description", "wDescription", "description"),
  f("longDescription", "wLongDescription", "long_description"),
  f("aiCategoryEstimation", "wAiCategoryEstimation", "ai_category_estimation", false),
  f("stars", "wStars", "stars"),
  f("reviewCount", "wReviewCount", "review_count"),
  f("websiteSchemaTypes", "wWebsiteSchemaTypes", "website_schema_types", false),
  f("lastBuyingSignal", "wLastBuyingSignal", "last_buying_signal"),
  f("buyingSignalType", "wBuyingSignalType", "buying_signal_type", false),
  f("lastUpdated", "wLastUpdated", "last_updated"),
  f("employees", "wEmployees", "employees"),
  f("foundedDate", "wFoundedDate", "founded_date"),
  f("numberOfLocations", "wNumberOfLocations", "number_of_locations"),
  f("isChain", "wIsChain", "is_chain"),
  f("priceRange", "wPriceRange", "price_range"),
  f("legalName", "wLegalName", "legal_name"),
  f("naicsCode", "wNaicsCode", "naics_code"),
  f("founders", "wFounders", "founders", false),
  f("openingHours", "wOpeningHours", "opening_hours"),
  f("socialProfiles", "wSocialProfiles", "social_profiles", false),
  f("webTechnologies", "wWebTechnologies", "web_technologies", false),
  f("databaseType", "wDatabaseType", null, false),
];

/** The columns a derived field is computed from (see toLead). */
const DERIVED_FROM: Readonly<Record<string, readonly (keyof LeadsTable)[]>> = {
  website: ["registered_url", "crawled_url"],
  phoneTotal: ["phone", "phone_secondary"],
  databaseType: [],
};

/**
 * The columns the given fields (camelCase names) are read or computed from, plus `id`: what a
 * reader needs to give those fields their true values.
 */
export function leadColumnsFor(fieldNames: Iterable<string>): Set<keyof LeadsTable> {
  const columns = new Set<keyof LeadsTable>(["id"]);
  for (const name of fieldNames) {
    const field = resolveLeadField(name);
    if (!field) continue;
    if (field.column) columns.add(field.column);
    for (const column of DERIVED_FROM[field.name] ?? []) columns.add(column);
  }
  return columns;
}

const byName = new Map<string, LeadField>();
for (const field of LEAD_FIELDS) {
  byName.set(field.name.toLowerCase(), field);
  byName.set(field.alias.toLowerCase(), field);
}

/** The field a client named, by its camelCase name or database-style alias (any case); undefined if none. */
export function resolveLeadField(name: string): LeadField | undefined {
  return byName.get(name.trim().toLowerCase());
}
