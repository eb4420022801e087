import { resolveLeadField } from "../fields.js";
import {
  isBlank,
  parseBoolean,
  parseCount,
  parseDateTime,
  parseEmail,
  parseList,
  parsePlainDate,
  parseStars,
  parseState,
  parseStringMap,
  parseText,
  parseZip,
  ValueProblem,
  type RecordForm,
} from "./values.js";

export type { RecordForm } from "./values.js";

/**
 * One lead as an import file carries it (NDJSON object or CSV row), with the API's camelCase
 * field names. Every field is optional; `id` is the lead's external id and makes the import an
 * upsert. In CSV every value is a string (lists: a JSON array or items separated by `|` or `;`).
 */
export interface LeadImportRecord {
  id?: string | null;
  companyName?: string | null;
  /** The registered URL when `registeredUrl` is not given. */
  website?: string | null;
  registeredUrl?: string | null;
  crawledUrl?: string | null;
  email?: string | null;
  emailSecondary?: string | null;
  emailTier1?: string | null;
  emailTier2?: string | null;
  emailTier3?: string | null;
  emailTier4?: string | null;
  emailTier5?: string | null;
  emailTier6?: string | null;
  phone?: string | null;
  phoneSecondary?: string | null;
  /** The street line (stored as `street`; `street` itself is accepted too). */
  address?: string | null;
  street?: string | null;
  city?: string | null;
  /** Two-letter US state code, any case. */
  state?: string | null;
  zip?: string | null;
  country?: string | null;
  category?: string | null;
  description?: string | null;
  longDescription?: string | null;
  /** One to three category names, or null while not classified. */
  aiCategoryEstimation?: string[] | null;
  /** 0 to 5. */
  stars?: number | null;
  reviewCount?: number | null;
  websiteSchemaTypes?: string[] | null;
  /** ISO 8601 date-time. */
  lastBuyingSignal?: string | null;
  buyingSignalType?: string[] | null;
  /** ISO 8601 date-time; the import time when absent. */
  lastUpdated?: string | null;
  legalName?: string | null;
  employees?: number | null;
  /** `YYYY-MM-DD`. */
  foundedDate?: string | null;
  numberOfLocations?: number | null;
  isChain?: boolean | null;
  priceRange?: string | null;
  naicsCode?: string | null;
  founders?: string[] | null;
  openingHours?: string | null;
  socialProfiles?: Record<string, string> | null;
  webTechnologies?: string[] | null;
}

/** The clean values of one lead, by column; every column is present (an import replaces the lead). */
export interface LeadImportRow {
  external_id: string | null;
  company_name: string | null;
  legal_name: string | null;
  registered_url: string | null;
  crawled_url: string | null;
  email: string | null;
  email_secondary: string | null;
  email_tier1: string | null;
  email_tier2: string | null;
  email_tier3: string | null;
  email_tier4: string | null;
  email_tier5: string | null;
  email_tier6: string | null;
  phone: string | null;
  phone_secondary: string | null;
  street: string | null;
  city: string | null;
  state: string | null;
  zip: string | null;
  country: string | null;
  category: string | null;
  description: string | null;
  long_description: string | null;
  ai_category_estimation: string[] | null;
  stars: number | null;
  review_count: number | null;
  website_schema_types: string[];
  last_buying_signal: string | null;
  buying_signal_type: string[];
  /** Null: the import time. */
  last_updated: string | null;
  employees: number | null;
  founded_date: string | null;
  number_of_locations: number | null;
  is_chain: boolean | null;
  price_range: string | null;
  naics_code: string | null;
  founders: string[];
  opening_hours: string | null;
  social_profiles: Record<string, string>;
  web_technologies: string[];
}

/** The columns an import writes, in a fixed order. */
export type LeadImportColumn = keyof LeadImportRow;

type Parser = (value: unknown, form: RecordForm) => unknown;

const text =
  (max: number, allowNumber = false): Parser =>
  (v) =>
    parseText(v, max, allowNumber);
const SHORT = text(1_000);
const URL_TEXT = text(2_048);
const LONG = text(20_000);
const PHONE = text(50, true);
const email: Parser = (v) => parseEmail(v);

function aiCategories(value: unknown, form: RecordForm): string[] | null {
  const items = parseList(value, form);
  if (items.length > 3) throw new ValueProblem("must have 1 to 3 category names (or be null)");
  return items.length === 0 ? null : items;
}

interface FieldSpec {
  column: LeadImportColumn;
  parse: Parser;
}

/** Every field an import reads, by camelCase name. `website` and `address` are handled apart. */
const FIELDS: Record<string, FieldSpec> = {
  id: { column: "external_id", parse: text(255, true) },
  companyName: { column: "company_name", parse: SHORT },
  registeredUrl: { column: "registered_url", parse: URL_TEXT },
  crawledUrl: { column: "crawled_url", parse: URL_TEXT },
  email: { column: "email", parse: email },
  emailSecondary: { column: "email_secondary", parse: email },
  emailTier1: { column: "email_tier1", parse: email },
  emailTier2: { column: "email_tier2", parse: email },
  emailTier3: { column: "email_tier3", parse: email },
  emailTier4: { column: "email_tier4", parse: email },
  emailTier5: { column: "email_tier5", parse: email },
  emailTier6: { column: "email_tier6", parse: email },
  phone: { column: "phone", parse: PHONE },
  phoneSecondary: { column: "phone_secondary", parse: PHONE },
  street: { column: "street", parse: SHORT },
  city: { column: "city", parse: SHORT },
  state: { column: "state", parse: parseState },
  zip: { column: "zip", parse: parseZip },
  country: { column: "country", parse: text(100) },
  category: { column: "category", parse: SHORT },
  description: { column: "description", parse: LONG },
  longDescription: { column: "long_description", parse: LONG },
  aiCategoryEstimation: { column: "ai_category_estimation", parse: aiCategories },
  stars: { column: "stars", parse: parseStars },
  reviewCount: { column: "review_count", parse: parseCount },
  websiteSchemaTypes: { column: "website_schema_types", parse: parseList },
  lastBuyingSignal: { column: "last_buying_signal", parse: parseDateTime },
  buyingSignalType: { column: "buying_signal_type", parse: parseList },
  lastUpdated: { column: "last_updated", parse: parseDateTime },
  legalName: { column: "legal_name", parse: SHORT },
  employees: { column: "employees", parse: parseCount },
  foundedDate: { column: "founded_date", parse: parsePlainDate },
  numberOfLocations: { column: "number_of_locations", parse: parseCount },
  isChain: { column: "is_chain", parse: parseBoolean },
  priceRange: { column: "price_range", parse: text(20) },
  naicsCode: { column: "naics_code", parse: text(10, true) },
  founders: { column: "founders", parse: parseList },
  openingHours: { column: "opening_hours", parse: LONG },
  socialProfiles: { column: "social_profiles", parse: parseStringMap },
  webTechnologies: { column: "web_technologies", parse: parseList },
};

/** Fields read but not stored under their own name. */
const SPECIAL = new Set(["website", "address"]);

/** Every column of an import row, in insert order. */
export const IMPORT_COLUMNS: readonly LeadImportColumn[] = [
  ...new Set(Object.values(FIELDS).map((f) => f.column)),
];

/** A row with every column empty (written out as one literal: it is built once per record). */
function emptyRow(): LeadImportRow {
  return {
    external_id: null,
    company_name: null,
    legal_name: null,
    registered_url: null,
    crawled_url: null,
    email: null,
    email_secondary: null,
    email_tier1: null,
    email_tier2: null,
    email_tier3: null,
    email_tier4: null,
    email_tier5: null,
    email_tier6: null,
    phone: null,
    phone_secondary: null,
    street: null,
    city: null,
    state: null,
    zip: null,
    country: null,
    category: null,
    description: null,
    long_description: null,
    ai_category_estimation: null,
    stars: null,
    review_count: null,
    website_schema_types: [],
    last_buying_signal: null,
    buying_signal_type: [],
    last_updated: null,
    employees: null,
    founded_date: null,
    number_of_locations: null,
    is_chain: null,
    price_range: null,
    naics_code: null,
    founders: [],
    opening_hours: null,
    social_profiles: {},
    web_technologies: [],
  };
}

const canonicalNames = new Map<string, string | null>();

/**
 * The camelCase field a key names: exact, any case, or a database-style alias such as
 * `wCompanyName`; null for keys the import does not read (they are ignored).
 */
export function canonicalFieldName(key: string): string | null {
  const cached = canonicalNames.get(key);
  if (cached !== undefined) return cached;
  const lower = key.trim().toLowerCase();
  let name: string | null =
    Object.keys(FIELDS).find((n) => n.toLowerCase() === lower) ??
    [...SPECIAL].find((n) => n.toLowerCase() === lower) ??
    null;
  if (name === null) {
    const field = resolveLeadField(key);
    if (field && (field.name in FIELDS || SPECIAL.has(field.name))) name = field.name;
  }
  if (canonicalNames.size < 10_000) canonicalNames.set(key, name);
  return name;
}

/** A validated record: the row to write, or every problem found (one message each). */
export type LeadValidation = { ok: true; row: LeadImportRow } | { ok: false; problems: string[] };

function problemText(field: string, err: unknown): string {
  if (err instanceof ValueProblem) return `${field} ${err.message}`;
  throw err;
}

/**
 * Validates one raw record (a parsed JSON value, or a CSV row as an object of strings) into a row.
 * Blank values (null, absent, empty string) are null; unknown keys are ignored. `website` fills
 * the registered URL when `registeredUrl` is blank; `street` wins over `address` when both are set.
 */
export function validateLeadRecord(raw: unknown, form: RecordForm): LeadValidation {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { ok: false, problems: ["a lead must be a JSON object"] };
  }
  const row = emptyRow() as unknown as Record<LeadImportColumn, unknown>;
  const problems: string[] = [];
  const special: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    const name = canonicalFieldName(key);
    if (name === null || isBlank(value)) continue;
    if (SPECIAL.has(name)) {
      special[name] = value;
      continue;
    }
    const spec = FIELDS[name];
    if (!spec) continue;
    try {
      row[spec.column] = spec.parse(value, form);
    } catch (err) {
      problems.push(problemText(name, err));
    }
  }
  if (special.website !== undefined && row.registered_url === null) {
    try {
      row.registered_url = URL_TEXT(special.website, form);
    } catch (err) {
      problems.push(problemText("website", err));
    }
  }
  if (special.address !== undefined && row.street === null) {
    try {
      row.street = SHORT(special.address, form);
    } catch (err) {
      problems.push(problemText("address", err));
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, row: row as unknown as LeadImportRow };
}
