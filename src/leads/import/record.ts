import type { Selectable } from "kysely";
import type { LeadsTable } from "../../db/schema/leads.js";
import { compileShape } from "../compiled-shape.js";
import { resolveLeadField, STORED_LEAD_FIELDS, type StoredLeadField } from "../fields.js";
import { isBlank, textParser, ValueProblem, type FieldParser, type RecordForm } from "./values.js";

export type { RecordForm } from "./values.js";

/**
 * One lead as an import file carries it (NDJSON object or CSV row), with the API's camelCase
 * field names: every stored field of the catalogue (src/leads/fields.ts; test/lead-fields.test.ts
 * checks both ways), `website` and `address`. Every field is optional; `id` is the lead's external
 * id and makes the import an upsert. In CSV every value is a string (lists: a JSON array or items
 * separated by `|` or `;`).
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
  /** `YYYY-MM-DD`: when the website's domain was registered. */
  registrationDate?: string | null;
  redirect?: boolean | null;
  /** ISO 8601 date-time: when the website was last crawled. */
  timeScraped?: string | null;
  addressFull?: string | null;
  addressSource?: string | null;
  /** A domain such as `google.com` (stored in lower case). */
  emailPrimaryProvider?: string | null;
  /** A domain such as `outlook.com` (stored in lower case). */
  websiteEmailProvider?: string | null;
  /** `spf`, `dkim`, `dmarc`, `bimi` or `none` (stored in lower case). */
  websiteEmailSecurity?: string[] | null;
  founderEmails?: string[] | null;
  founderPhones?: string[] | null;
  /** -90 to 90. */
  latitude?: number | null;
  /** -180 to 180. */
  longitude?: number | null;
  areaServed?: string | null;
  offers?: string | null;
  brand?: string | null;
  slogan?: string | null;
  logoUrl?: string | null;
  platform?: string | null;
  bookingOpsCrmSoftware?: string | null;
  reputationChatSoftware?: string | null;
  marketingEmailSoftware?: string | null;
  adPixels?: string | null;
  paymentFinancingSoftware?: string | null;
  /** Job postings found on the website; null: no careers page found. */
  openPositions?: number | null;
  /** 0 to 5: the rating the website states (schema.org). */
  ratingValue?: number | null;
  /** 9 digits, dashes allowed (stored as 9 digits). */
  duns?: string | null;
}

/** The columns of `leads` an import never writes: the key, the version and the row's own times. */
type NotImported = "id" | "version" | "created_at" | "updated_at";

/** A date-time of an import row is the record's ISO text (PostgreSQL parses it). */
type ImportValue<T> = T extends Date ? string : T;

/**
 * The clean values of one lead, by column; every column is present (an import replaces the lead):
 * `external_id` and the column of every imported field of the catalogue, typed from the table
 * (`LeadsTable`, the one declaration of the columns). A null `last_updated` means the import time.
 */
export type LeadImportRow = {
  [K in Exclude<keyof LeadsTable, NotImported>]: ImportValue<Selectable<LeadsTable>[K]>;
};

/** The columns an import writes, in a fixed order. */
export type LeadImportColumn = keyof LeadImportRow;

interface FieldSpec {
  column: LeadImportColumn;
  parse: FieldParser;
}

const EXTERNAL_ID = textParser(255, true);

/** The stored fields an import sets, with their parsers (from the catalogue). */
const IMPORTED_FIELDS = STORED_LEAD_FIELDS.filter(
  (field): field is StoredLeadField & { parse: FieldParser } => field.parse !== null,
);

/**
 * Every field an import reads, by camelCase name: `id` (the external id) and each imported field
 * of the catalogue. `website` and `address` are handled apart.
 */
const FIELDS = new Map<string, FieldSpec>([
  ["id", { column: "external_id", parse: EXTERNAL_ID }],
  ...IMPORTED_FIELDS.map(
    (field) => [field.name, { column: field.column as LeadImportColumn, parse: field.parse }] as const,
  ),
]);

/** Fields read but not stored under their own name: fallbacks for the registered URL and the street. */
const SPECIAL = new Set(["website", "address"]);
const URL_FALLBACK = resolveLeadField("registeredUrl")!.parse!;
const STREET_FALLBACK = resolveLeadField("street")!.parse!;

/** Every column of an import row, in insert order. */
export const IMPORT_COLUMNS: readonly LeadImportColumn[] = [
  ...new Set([...FIELDS.values()].map((f) => f.column)),
];

/** A column's empty value: `[]` for lists (but the nullable AI categories), `{}` for objects. */
function emptyValueCode(field: StoredLeadField): string {
  if (field.type === "list" && !field.nullable) return "[]";
  if (field.type === "object") return "{}";
  return "null";
}

/**
 * A row with every column empty: one object literal compiled once from the catalogue
 * (src/leads/compiled-shape.ts), since it is built once per record.
 */
const emptyRow: (v?: undefined) => LeadImportRow = compileShape("emptyRow", [
  ["external_id", "null"],
  ...IMPORTED_FIELDS.map((field) => [field.column, emptyValueCode(field)] as const),
]);

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
    [...FIELDS.keys()].find((n) => n.toLowerCase() === lower) ??
    [...SPECIAL].find((n) => n.toLowerCase() === lower) ??
    null;
  if (name === null) {
    const field = resolveLeadField(key);
    if (field && (FIELDS.has(field.name) || SPECIAL.has(field.name))) name = field.name;
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
    const spec = FIELDS.get(name);
    if (!spec) continue;
    try {
      row[spec.column] = spec.parse(value, form);
    } catch (err) {
      problems.push(problemText(name, err));
    }
  }
  if (special.website !== undefined && row.registered_url === null) {
    try {
      row.registered_url = URL_FALLBACK(special.website, form);
    } catch (err) {
      problems.push(problemText("website", err));
    }
  }
  if (special.address !== undefined && row.street === null) {
    try {
      row.street = STREET_FALLBACK(special.address, form);
    } catch (err) {
      problems.push(problemText("address", err));
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, row: row as unknown as LeadImportRow };
}
