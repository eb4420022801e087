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
  /**
   * Further names accepted wherever a client names a field (`sortBy`, `orColumns`, an export
   * format's `sourceField`): the real service's database-style names (`wOgrequestedUrl`,
   * `wProfileDescriptionShort`, ...; docs/compatibility.md).
   */
  aliases: readonly string[];
  /** The column it is read from; null for fields derived from others. */
  column: keyof LeadsTable | null;
  type: LeadFieldType;
  /** Single-valued fields can be sorted on. */
  sortable: boolean;
  /**
   * The key of the field's term filters in the real service's search model: `<key>Include`,
   * `<key>Exclude` and `<key>EmptyFilter` (contact and company-detail filters; docs/leads.md).
   */
  filterKey: string | null;
}

interface FieldOptions {
  /** Further accepted names (see LeadField.aliases). */
  aliases?: readonly string[];
  /** See LeadField.filterKey. */
  filterKey?: string;
  sortable?: boolean;
}

const f = (
  name: string,
  alias: string,
  column: keyof LeadsTable | null,
  type: LeadFieldType = "text",
  options: FieldOptions = {},
): LeadField => ({
  name,
  alias,
  aliases: options.aliases ?? [],
  column,
  type,
  sortable: options.sortable ?? (column !== null && type !== "list" && type !== "object"),
  filterKey: options.filterKey ?? null,
});

/**
 * Every field of a lead (search results and exports), in the order of the default export columns.
 * `website` is the registered URL or, without one, the crawled URL; `address` is the street line.
 */
export const LEAD_FIELDS: readonly LeadField[] = [
  f("id", "wId", "id", "integer"),
  f("companyName", "wCompanyName", "company_name"),
  f("website", "wWebsite", null),
  f("registeredUrl", "wRegisteredUrl", "registered_url", "text", { aliases: ["wOgrequestedUrl"] }),
  f("crawledUrl", "wCrawledUrl", "crawled_url", "text", { aliases: ["wSimpleCrawledUrl"] }),
  f("email", "wEmailPrimary", "email", "text", { aliases: ["emailPrimary"], filterKey: "emailPrimary" }),
  f("emailSecondary", "wEmailSecondary", "email_secondary", "text", { filterKey: "emailSecondary" }),
  f("emailTier1", "wEmailTier1", "email_tier1", "text", { filterKey: "emailTier1" }),
  f("emailTier2", "wEmailTier2", "email_tier2", "text", { filterKey: "emailTier2" }),
  f("emailTier3", "wEmailTier3", "email_tier3", "text", { filterKey: "emailTier3" }),
  f("emailTier4", "wEmailTier4", "email_tier4", "text", { filterKey: "emailTier4" }),
  f("emailTier5", "wEmailTier5", "email_tier5", "text", { filterKey: "emailTier5" }),
  f("emailTier6", "wEmailTier6", "email_tier6", "text", { filterKey: "emailTier6" }),
  f("emailPrimaryProvider", "wEmailPrimaryMx", "email_primary_mx"),
  f("websiteEmailProvider", "wEmailDomainMx", "email_domain_mx"),
  f("websiteEmailSecurity", "wEmailSecurity", "email_security", "list"),
  f("phone", "wPhonePrimary", "phone", "text", { aliases: ["phonePrimary"], filterKey: "phonePrimary" }),
  f("phoneSecondary", "wPhoneSecondary", "phone_secondary", "text", { filterKey: "phoneSecondary" }),
  // A count in our Lead; its term filter (`phoneTotalInclude`) matches any of the lead's phones.
  f("phoneTotal", "wPhoneTotal", null, "integer", { filterKey: "phoneTotal" }),
  f("address", "wAddress", "street"),
  f("street", "wStreet", "street", "text", { aliases: ["wAddressStreet"] }),
  f("city", "wCity", "city", "text", { aliases: ["wAddressCity"] }),
  f("state", "wState", "state", "text", { aliases: ["wAddressState"] }),
  f("zip", "wZip", "zip", "text", { aliases: ["wAddressZip"] }),
  f("country", "wCountry", "country"),
  f("addressFull", "wAddressFull", "address_full"),
  f("addressSource", "wAddressSource", "address_source"),
  f("latitude", "wGeoLat", "latitude", "number"),
  f("longitude", "wGeoLong", "longitude", "number"),
  f("category", "wCategory", "category", "text", { aliases: ["wProfileCategory"] }),
  f("description", "wDescription", "description", "text", { aliases: ["wProfileDescriptionShort"] }),
  f("longDescription", "wLongDescription", "long_description", "text", {
    aliases: ["wProfileDescriptionLong"],
  }),
  f("aiCategoryEstimation", "wAiCategoryEstimation", "ai_category_estimation", "list"),
  f("stars", "wStars", "stars", "number"),
  f("ratingValue", "wRatingValue", "rating_value", "number"),
  f("reviewCount", "wReviewCount", "review_count", "integer"),
  f("websiteSchemaTypes", "wWebsiteSchemaTypes", "website_schema_types", "list", {
    aliases: ["wWebsiteSchema"],
  }),
  f("lastBuyingSignal", "wLastBuyingSignal", "last_buying_signal", "timestamp"),
  f("buyingSignalType", "wBuyingSignalType", "buying_signal_type", "list", {
    aliases: ["lastUpdatedReason"],
  }),
  f("lastUpdated", "wLastUpdated", "last_updated", "timestamp"),
  f("registrationDate", "wProfileDate", "registration_date", "date"),
  f("redirect", "wRedirectYn", "redirect", "boolean"),
  f("timeScraped", "wTimeScraped", "time_scraped", "timestamp"),
  f("employees", "wEmployees", "employees", "integer", {
    aliases: ["wEmployeeCount"],
    filterKey: "employeeCount",
  }),
  f("openPositions", "wOpenPositions", "open_positions", "integer"),
  f("foundedDate", "wFoundedDate", "founded_date", "date", {
    aliases: ["wFoundingDate"],
    filterKey: "foundingDate",
  }),
  f("numberOfLocations", "wNumberOfLocations", "number_of_locations", "integer", {
    aliases: ["wNumLocations"],
  }),
  f("isChain", "wIsChain", "is_chain", "boolean", { filterKey: "isChain" }),
  f("priceRange", "wPriceRange", "price_range", "text", { filterKey: "priceRange" }),
  f("legalName", "wLegalName", "legal_name", "text", { filterKey: "legalName" }),
  f("naicsCode", "wNaicsCode", "naics_code", "text", {
    aliases: ["wIndustryNaics"],
    filterKey: "industryNaics",
  }),
  f("duns", "wDuns", "duns", "text", { filterKey: "duns" }),
  f("founders", "wFounders", "founders", "list", { aliases: ["wFounder"], filterKey: "founder" }),
  f("founderEmails", "wFounderEmail", "founder_emails", "list", { filterKey: "founderEmail" }),
  f("founderPhones", "wFounderPhone", "founder_phones", "list", { filterKey: "founderPhone" }),
  f("openingHours", "wOpeningHours", "opening_hours", "text", { filterKey: "openingHours" }),
  f("areaServed", "wAreaServed", "area_served", "text", { filterKey: "areaServed" }),
  f("offers", "wOffers", "offers", "text", { filterKey: "offers" }),
  f("brand", "wBrand", "brand", "text", { filterKey: "brand" }),
  f("slogan", "wSlogan", "slogan", "text", { filterKey: "slogan" }),
  f("logoUrl", "wLogoUrl", "logo_url", "text", { filterKey: "logoUrl" }),
  f("socialProfiles", "wSocialProfiles", "social_profiles", "object", { filterKey: "socialProfiles" }),
  f("platform", "wPlatform", "platform", "text", { filterKey: "platform" }),
  f("bookingOpsCrmSoftware", "wBookingOpsCrmSoftware", "booking_ops_crm_software", "text", {
    filterKey: "bookingOpsCrmSoftware",
  }),
  f("reputationChatSoftware", "wReputationChatSoftware", "reputation_chat_software", "text", {
    filterKey: "reputationChatSoftware",
  }),
  f("marketingEmailSoftware", "wMarketingEmailSoftware", "marketing_email_software", "text", {
    filterKey: "marketingEmailSoftware",
  }),
  f("adPixels", "wAdPixels", "ad_pixels", "text", { filterKey: "adPixels" }),
  f("paymentFinancingSoftware", "wPaymentFinancingSoftware", "payment_financing_software", "text", {
    filterKey: "paymentFinancingSoftware",
  }),
  f("webTechnologies", "wWebTechnologies", "web_technologies", "list"),
  f("databaseType", "wDatabaseType", null),
];

const byName = new Map<string, LeadField>();
for (const field of LEAD_FIELDS) {
  for (const name of [field.name, field.alias, ...field.aliases]) {
    const key = name.toLowerCase();
    if (byName.has(key)) throw new Error(`lead field name ${name} is declared twice`);
    byName.set(key, field);
  }
}

/** The field a client named, by its camelCase name or a database-style alias (any case); undefined if none. */
export function resolveLeadField(name: string): LeadField | undefined {
  return byName.get(name.trim().toLowerCase());
}

/** The fields that have term filters (`<filterKey>Include`, `...Exclude`, `...EmptyFilter`). */
export const FILTERED_LEAD_FIELDS: readonly (LeadField & { filterKey: string })[] = LEAD_FIELDS.filter(
  (field): field is LeadField & { filterKey: string } => field.filterKey !== null,
);
