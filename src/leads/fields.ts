import type { LeadsTable } from "../db/schema/leads.js";
import {
  lowerTextParser,
  parseBoolean,
  parseCount,
  parseDateTime,
  parseDuns,
  parseEmail,
  parseEmailList,
  parseList,
  parseLowerList,
  parsePhoneList,
  parsePlainDate,
  parseStars,
  parseState,
  parseStringMap,
  parseZip,
  rangeParser,
  textParser,
  ValueProblem,
  type FieldParser,
  type RecordForm,
} from "./import/values.js";

/**
 * What kind of value a field holds in the API's Lead: `list` is an array of strings (nullable only
 * for `aiCategoryEstimation`), `timestamp` an ISO 8601 date-time, `date` a `YYYY-MM-DD` date,
 * `object` a JSON object of strings.
 */
export type LeadFieldType =
  "integer" | "number" | "boolean" | "text" | "list" | "timestamp" | "date" | "object";

/**
 * How a field without a column of its own gets its value: the first set of some columns
 * (`website`), how many of some columns are set (`phoneTotal`), or a constant (`databaseType`).
 * Each reader of the catalogue computes these the same way, in JavaScript or in SQL.
 */
export type LeadFieldDerivation =
  | { kind: "firstOf"; columns: readonly (keyof LeadsTable)[] }
  | { kind: "countSet"; columns: readonly (keyof LeadsTable)[] }
  | { kind: "constant"; value: string };

/** A lead field as clients name it. */
export interface LeadField {
  /** The API's camelCase name (also the field's key in the domain `LeadRecord`). */
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
  /**
   * Whether the API's Lead may hold null: every single value read from a column may (but `id`); a
   * list is an empty array and an object `{}` instead (but `aiCategoryEstimation`: null while not
   * classified); of derived fields only `website` (neither URL known).
   */
  nullable: boolean;
  /**
   * The field whose value this one repeats under another name (`address` is `street`); it reads
   * the same column but is not stored, imported or compared on its own. Null for other fields.
   */
  copyOf: string | null;
  /** How the value is computed when `column` is null. */
  derived: LeadFieldDerivation | null;
  /**
   * How an import reads the field (NDJSON value or CSV cell) into its column; null for fields an
   * import does not set by their own name (the lead id, derived fields and copies: the import reads
   * `id` as the external id, `website` and `address` as fallbacks; src/leads/import/record.ts).
   */
  parse: FieldParser | null;
  /** One of the columns of an export without a format (src/export-files/format.ts). */
  defaultExport: boolean;
  /**
   * The contact detail its values are: a preview masks a `text` or `list` one on leads the account
   * has not received (src/leads/presenter.ts), and term filters compare phones by their digits
   * (`phoneTotal`, a count, filters on its phones). Null for other fields.
   */
  contact: "phone" | "email" | null;
}

/** A field stored in a column of its own: it is a key of LeadRecord and of an import row. */
export type StoredLeadField = LeadField & { column: keyof LeadsTable; parse: FieldParser | null };

interface FieldOptions {
  /** Further accepted names (see LeadField.aliases). */
  aliases?: readonly string[];
  /** See LeadField.filterKey. */
  filterKey?: string;
  sortable?: boolean;
  /** A list that is null rather than empty when unknown (see LeadField.nullable). */
  nullableList?: boolean;
  /** See LeadField.copyOf. */
  copyOf?: string;
  /** See LeadField.derived. */
  derived?: LeadFieldDerivation;
  /** The import's parser when not the type's usual one (see TYPE_PARSERS); null: not imported. */
  parse?: FieldParser | null;
  /** See LeadField.defaultExport. */
  defaultExport?: boolean;
  /** Overrides LeadField.nullable (the lead id is never null). */
  nullable?: boolean;
  /** See LeadField.contact. */
  contact?: "phone" | "email";
}

// Parsers the fields share; the length caps are documented in docs/leads.md ("Lead import").
const SHORT = textParser(1_000);
const URL_TEXT = textParser(2_048);
const LONG = textParser(20_000);
const PHONE = textParser(50, true);
const DOMAIN = lowerTextParser(253);

function aiCategories(value: unknown, form: RecordForm): string[] | null {
  const items = parseList(value, form);
  if (items.length > 3) throw new ValueProblem("must have 1 to 3 category names (or be null)");
  return items.length === 0 ? null : items;
}

/** The import's parser of each type; `number` fields name theirs (each has its own range). */
const TYPE_PARSERS: Record<LeadFieldType, FieldParser | null> = {
  integer: parseCount,
  number: null,
  boolean: parseBoolean,
  text: SHORT,
  list: parseList,
  timestamp: parseDateTime,
  date: parsePlainDate,
  object: parseStringMap,
};

/** See LeadField.nullable. */
function nullableByDefault(type: LeadFieldType, options: FieldOptions): boolean {
  if (options.derived) return options.derived.kind === "firstOf";
  if (type === "list") return options.nullableList === true;
  return type !== "object";
}

const f = (
  name: string,
  alias: string,
  column: keyof LeadsTable | null,
  type: LeadFieldType = "text",
  options: FieldOptions = {},
): LeadField => {
  const stored = column !== null && options.copyOf === undefined;
  const parse = stored ? (options.parse === undefined ? TYPE_PARSERS[type] : options.parse) : null;
  if (stored && parse === null && options.parse !== null)
    throw new Error(`lead field ${name} needs a parser`);
  if ((column === null) !== (options.derived !== undefined)) {
    throw new Error(`lead field ${name} needs either a column or a derivation`);
  }
  return {
    name,
    alias,
    aliases: options.aliases ?? [],
    column,
    type,
    sortable: options.sortable ?? (column !== null && type !== "list" && type !== "object"),
    filterKey: options.filterKey ?? null,
    nullable: options.nullable ?? nullableByDefault(type, options),
    copyOf: options.copyOf ?? null,
    derived: options.derived ?? null,
    parse,
    defaultExport: options.defaultExport ?? false,
    contact: options.contact ?? null,
  };
};

/** The options of a field in the default export columns. */
const DEFAULT = { defaultExport: true } as const;

/**
 * Every field of a lead (search results, snapshots and exports), in the order of the API's Lead,
 * of snapshots and of the default export columns (those marked `defaultExport`). `website` is the
 * registered URL or, without one, the crawled URL; `address` is the street line.
 */
export const LEAD_FIELDS: readonly LeadField[] = [
  f("id", "wId", "id", "integer", { parse: null, nullable: false, ...DEFAULT }),
  f("companyName", "wCompanyName", "company_name", "text", DEFAULT),
  f("website", "wWebsite", null, "text", {
    derived: { kind: "firstOf", columns: ["registered_url", "crawled_url"] },
    ...DEFAULT,
  }),
  f("registeredUrl", "wRegisteredUrl", "registered_url", "text", {
    aliases: ["wOgrequestedUrl"],
    parse: URL_TEXT,
  }),
  f("crawledUrl", "wCrawledUrl", "crawled_url", "text", { aliases: ["wSimpleCrawledUrl"], parse: URL_TEXT }),
  f("email", "wEmailPrimary", "email", "text", {
    contact: "email",
    aliases: ["emailPrimary"],
    filterKey: "emailPrimary",
    parse: parseEmail,
    ...DEFAULT,
  }),
  f("emailSecondary", "wEmailSecondary", "email_secondary", "text", {
    contact: "email",
    filterKey: "emailSecondary",
    parse: parseEmail,
    ...DEFAULT,
  }),
  f("emailTier1", "wEmailTier1", "email_tier1", "text", {
    contact: "email",
    filterKey: "emailTier1",
    parse: parseEmail,
  }),
  f("emailTier2", "wEmailTier2", "email_tier2", "text", {
    contact: "email",
    filterKey: "emailTier2",
    parse: parseEmail,
  }),
  f("emailTier3", "wEmailTier3", "email_tier3", "text", {
    contact: "email",
    filterKey: "emailTier3",
    parse: parseEmail,
  }),
  f("emailTier4", "wEmailTier4", "email_tier4", "text", {
    contact: "email",
    filterKey: "emailTier4",
    parse: parseEmail,
  }),
  f("emailTier5", "wEmailTier5", "email_tier5", "text", {
    contact: "email",
    filterKey: "emailTier5",
    parse: parseEmail,
  }),
  f("emailTier6", "wEmailTier6", "email_tier6", "text", {
    contact: "email",
    filterKey: "emailTier6",
    parse: parseEmail,
  }),
  f("emailPrimaryProvider", "wEmailPrimaryMx", "email_primary_mx", "text", { parse: DOMAIN }),
  f("websiteEmailProvider", "wEmailDomainMx", "email_domain_mx", "text", { parse: DOMAIN }),
  f("websiteEmailSecurity", "wEmailSecurity", "email_security", "list", { parse: parseLowerList }),
  f("phone", "wPhonePrimary", "phone", "text", {
    contact: "phone",
    aliases: ["phonePrimary"],
    filterKey: "phonePrimary",
    parse: PHONE,
    ...DEFAULT,
  }),
  f("phoneSecondary", "wPhoneSecondary", "phone_secondary", "text", {
    contact: "phone",
    filterKey: "phoneSecondary",
    parse: PHONE,
    ...DEFAULT,
  }),
  // A count in our Lead; its term filter (`phoneTotalInclude`) matches any of the lead's phones.
  f("phoneTotal", "wPhoneTotal", null, "integer", {
    contact: "phone",
    filterKey: "phoneTotal",
    derived: { kind: "countSet", columns: ["phone", "phone_secondary"] },
  }),
  f("address", "wAddress", "street", "text", { copyOf: "street", ...DEFAULT }),
  f("street", "wStreet", "street", "text", { aliases: ["wAddressStreet"] }),
  f("city", "wCity", "city", "text", { aliases: ["wAddressCity"], ...DEFAULT }),
  f("state", "wState", "state", "text", { aliases: ["wAddressState"], parse: parseState, ...DEFAULT }),
  f("zip", "wZip", "zip", "text", { aliases: ["wAddressZip"], parse: parseZip, ...DEFAULT }),
  f("country", "wCountry", "country", "text", { parse: textParser(100), ...DEFAULT }),
  f("addressFull", "wAddressFull", "address_full"),
  f("addressSource", "wAddressSource", "address_source", "text", { parse: textParser(100) }),
  f("latitude", "wGeoLat", "latitude", "number", { parse: rangeParser(-90, 90) }),
  f("longitude", "wGeoLong", "longitude", "number", { parse: rangeParser(-180, 180) }),
  f("category", "wCategory", "category", "text", { aliases: ["wProfileCategory"], ...DEFAULT }),
  f("aiCategoryEstimation", "wAiCategoryEstimation", "ai_category_estimation", "list", {
    nullableList: true,
    parse: aiCategories,
    ...DEFAULT,
  }),
  f("description", "wDescription", "description", "text", {
    aliases: ["wProfileDescriptionShort"],
    parse: LONG,
    ...DEFAULT,
  }),
  f("longDescription", "wLongDescription", "long_description", "text", {
    aliases: ["wProfileDescriptionLong"],
    parse: LONG,
  }),
  f("stars", "wStars", "stars", "number", { parse: parseStars, ...DEFAULT }),
  f("ratingValue", "wRatingValue", "rating_value", "number", { parse: parseStars }),
  f("reviewCount", "wReviewCount", "review_count", "integer", DEFAULT),
  f("websiteSchemaTypes", "wWebsiteSchemaTypes", "website_schema_types", "list", {
    aliases: ["wWebsiteSchema"],
  }),
  f("lastBuyingSignal", "wLastBuyingSignal", "last_buying_signal", "timestamp", DEFAULT),
  f("buyingSignalType", "wBuyingSignalType", "buying_signal_type", "list", {
    aliases: ["lastUpdatedReason"],
    ...DEFAULT,
  }),
  f("lastUpdated", "wLastUpdated", "last_updated", "timestamp", DEFAULT),
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
  f("priceRange", "wPriceRange", "price_range", "text", { filterKey: "priceRange", parse: textParser(20) }),
  f("legalName", "wLegalName", "legal_name", "text", { filterKey: "legalName" }),
  f("naicsCode", "wNaicsCode", "naics_code", "text", {
    aliases: ["wIndustryNaics"],
    filterKey: "industryNaics",
    parse: textParser(10, true),
  }),
  f("duns", "wDuns", "duns", "text", { filterKey: "duns", parse: parseDuns }),
  f("founders", "wFounders", "founders", "list", { aliases: ["wFounder"], filterKey: "founder" }),
  f("founderEmails", "wFounderEmail", "founder_emails", "list", {
    contact: "email",
    filterKey: "founderEmail",
    parse: parseEmailList,
  }),
  f("founderPhones", "wFounderPhone", "founder_phones", "list", {
    contact: "phone",
    filterKey: "founderPhone",
    parse: parsePhoneList,
  }),
  f("openingHours", "wOpeningHours", "opening_hours", "text", { filterKey: "openingHours", parse: LONG }),
  f("areaServed", "wAreaServed", "area_served", "text", { filterKey: "areaServed" }),
  f("offers", "wOffers", "offers", "text", { filterKey: "offers", parse: LONG }),
  f("brand", "wBrand", "brand", "text", { filterKey: "brand" }),
  f("slogan", "wSlogan", "slogan", "text", { filterKey: "slogan" }),
  f("logoUrl", "wLogoUrl", "logo_url", "text", { filterKey: "logoUrl", parse: URL_TEXT }),
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
  f("databaseType", "wDatabaseType", null, "text", { derived: { kind: "constant", value: "other" } }),
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

/** The fields stored in a column of their own, in catalogue order (LeadRecord's fields but `externalId`). */
export const STORED_LEAD_FIELDS: readonly StoredLeadField[] = LEAD_FIELDS.filter(
  (field): field is StoredLeadField => field.column !== null && field.copyOf === null,
);

/** The field stored in each column. */
const byColumn = new Map<string, StoredLeadField>(STORED_LEAD_FIELDS.map((field) => [field.column, field]));

/** The stored field of a column (`street` for the column `street`, which `address` reads too). */
export function storedFieldOf(column: keyof LeadsTable): StoredLeadField {
  const field = byColumn.get(column);
  if (!field) throw new Error(`no lead field is stored in column ${column}`);
  return field;
}

// Checked once when the module loads: copies read their field's column, derivations stored columns.
for (const field of LEAD_FIELDS) {
  if (field.copyOf !== null && resolveLeadField(field.copyOf)?.column !== field.column) {
    throw new Error(`lead field ${field.name} must read the column of ${field.copyOf}`);
  }
  if (field.derived && field.derived.kind !== "constant") field.derived.columns.forEach(storedFieldOf);
}
