import { sql, type RawBuilder, type SqlBool } from "kysely";
import { resolveLeadField } from "../fields.js";
import { DEFAULT_OR_COLUMNS, TERM_COLUMNS, URL_COLUMNS, type TermColumn } from "./columns.js";
import { DATE_FILTERS, endOf, utcDay, type DateRange } from "./dates.js";
import { emptyCondition, fieldTermConditions } from "./field-conditions.js";
import type { SearchFilters } from "./filters.js";
import { EMPTY_FILTERS, RANGES, VALUE_LISTS } from "./narrowing.js";
import {
  SEPARATOR,
  and,
  escapeLike,
  like,
  or,
  partsMatch,
  partsPattern,
  plainPattern,
  termParts,
  type Condition,
} from "./patterns.js";
import { storedSignalTypes } from "./signal-types.js";

/**
 * Each term column as a lower-cased, never-null text, and whether it joins several values with
 * the separator (list items, the two phones, the eight e-mail fields): a term matches when it is
 * in one of the values, and a `*` wildcard never spans two of them.
 */
const COLUMN_TEXT: Record<TermColumn, { text: RawBuilder<string>; joined: boolean }> = {
  registeredUrl: { text: sql`lower(coalesce(leads.registered_url, ''))`, joined: false },
  crawledUrl: { text: sql`lower(coalesce(leads.crawled_url, ''))`, joined: false },
  companyName: { text: sql`lower(coalesce(leads.company_name, ''))`, joined: false },
  aiCategoryEstimation: {
    text: sql`lower(coalesce(array_to_string(leads.ai_category_estimation, chr(1)), ''))`,
    joined: true,
  },
  description: { text: sql`lower(coalesce(leads.description, ''))`, joined: false },
  city: { text: sql`lower(coalesce(leads.city, ''))`, joined: false },
  street: { text: sql`lower(coalesce(leads.street, ''))`, joined: false },
  state: { text: sql`lower(coalesce(leads.state, ''))`, joined: false },
  zip: { text: sql`lower(coalesce(leads.zip, ''))`, joined: false },
  phonePrimary: { text: sql`lower(coalesce(leads.phone, ''))`, joined: false },
  phoneTotal: { text: sql`lower(concat_ws(chr(1), leads.phone, leads.phone_secondary))`, joined: true },
  email: {
    text: sql`lower(concat_ws(chr(1), leads.email, leads.email_secondary, leads.email_tier1, leads.email_tier2, leads.email_tier3, leads.email_tier4, leads.email_tier5, leads.email_tier6))`,
    joined: true,
  },
  emailPrimary: { text: sql`lower(coalesce(leads.email, ''))`, joined: false },
  emailTier1: { text: sql`lower(coalesce(leads.email_tier1, ''))`, joined: false },
  emailTier2: { text: sql`lower(coalesce(leads.email_tier2, ''))`, joined: false },
  emailTier3: { text: sql`lower(coalesce(leads.email_tier3, ''))`, joined: false },
  emailTier4: { text: sql`lower(coalesce(leads.email_tier4, ''))`, joined: false },
  emailTier5: { text: sql`lower(coalesce(leads.email_tier5, ''))`, joined: false },
  emailTier6: { text: sql`lower(coalesce(leads.email_tier6, ''))`, joined: false },
};
const SEARCH_TEXT = sql<string>`leads.search_text`;

/** The columns held by `search_text`: the four searched columns (docs/leads.md, search). */
const SEARCH_TEXT_COLUMNS: ReadonlySet<TermColumn> = new Set(DEFAULT_OR_COLUMNS);

/** A keyword or term in one column: its parts (`*` and, in URL columns, spaces are wildcards). */
export function columnMatch(column: TermColumn, term: string): Condition {
  const { text, joined } = COLUMN_TEXT[column];
  return partsMatch(text, termParts(term, URL_COLUMNS.has(column)), joined);
}

/**
 * A term matching any of `columns`. When every column is in `search_text` the condition starts
 * with an indexed match on it: exact on its own for the four columns and a term without spaces
 * (the wildcard's parts within one value of `search_text`), otherwise a prefilter (the parts of
 * the URL form in order, the looser one) before the per-column recheck.
 */
export function termMatchesAny(columns: readonly TermColumn[], term: string): Condition {
  const precise = or(columns.map((c) => columnMatch(c, term)));
  const indexable = !term.includes(SEPARATOR) && columns.every((c) => SEARCH_TEXT_COLUMNS.has(c));
  if (!indexable) return precise;
  if (columns.length === SEARCH_TEXT_COLUMNS.size && !/\s/.test(term)) {
    return partsMatch(SEARCH_TEXT, termParts(term, false), true);
  }
  const loose = termParts(
    term,
    columns.some((c) => URL_COLUMNS.has(c)),
  );
  return and([like(SEARCH_TEXT, partsPattern(loose)), precise]);
}

/** The columns `search` looks in: plain substring, `*` literal, no space wildcard. */
const SEARCH_COLUMNS = [
  "companyName",
  "registeredUrl",
  "crawledUrl",
  "description",
  "city",
  "phonePrimary",
] as const satisfies readonly TermColumn[];

/** Substrings of one text column (case-insensitive, literal); a lead without a value has none. */
const containsAny = (column: string, terms: string[]): Condition =>
  or(terms.map((t) => like(sql`lower(coalesce(${sql.ref(`leads.${column}`)}, ''))`, plainPattern(t))));

/** A ZIP value: 5 digits (or ZIP+4) select that ZIP, fewer digits are a prefix. */
function zipMatches(zip: string): Condition {
  const digits = zip.replace(/\D/g, "");
  if (digits.length === 9) {
    return sql<SqlBool>`regexp_replace(coalesce(leads.zip, ''), '[^0-9]', '', 'g') = ${digits}`;
  }
  if (digits.length === 5) return sql<SqlBool>`left(coalesce(leads.zip, ''), 5) = ${digits}`;
  return sql<SqlBool>`coalesce(leads.zip, '') like ${`${escapeLike(digits)}%`}`;
}

/** Whether a column holds no value: null or blank text, null, or an empty list. */
function columnEmpty(column: string, kind: "text" | "number" | "list"): Condition {
  const ref = sql.ref(`leads.${column}`);
  if (kind === "list") return sql<SqlBool>`coalesce(cardinality(${ref}), 0) = 0`;
  if (kind === "number") return sql<SqlBool>`${ref} is null`;
  return sql<SqlBool>`coalesce(btrim(${ref}), '') = ''`;
}

/** A date range over a column: date-only bounds of a whole-day filter cover the whole day. */
export function dateConditions(
  column: string,
  range: DateRange,
  wholeDayTo: boolean,
  dateColumn: boolean,
  table = "leads",
): Condition[] {
  const ref = sql.ref(`${table}.${column}`);
  const out: Condition[] = [];
  if (dateColumn) {
    if (range.from) out.push(sql<SqlBool>`${ref} >= cast(${utcDay(range.from.at)} as date)`);
    if (range.to) out.push(sql<SqlBool>`${ref} <= cast(${utcDay(range.to.at)} as date)`);
    return out;
  }
  if (range.from) out.push(sql<SqlBool>`${ref} >= ${range.from.at}`);
  if (range.to && range.to.dateOnly && wholeDayTo) {
    out.push(sql<SqlBool>`${ref} < ${endOf(range.to, wholeDayTo)}`);
  } else if (range.to) out.push(sql<SqlBool>`${ref} <= ${range.to.at}`);
  return out;
}

/** The date column of each date filter, and whether it holds dates (not instants). */
const DATE_COLUMNS = {
  lastBuyingSignal: { column: "last_buying_signal", date: false },
  registrationDate: { column: "registration_date", date: true },
  timeScraped: { column: "time_scraped", date: false },
} as const;

/** The values lower-cased by PostgreSQL (the same `lower()` as the column side). */
const lowerAll = (values: string[]) => sql.join(values.map((v) => sql`lower(${v})`));

/**
 * The WHERE condition of a search over `leads`, exactly as the lead search model says:
 * phase 1 (any positive keyword over the OR group, or any include term of a column in the OR
 * group, over its column), the required include terms of columns outside the OR group, phase 2
 * (negative keywords over the OR group, exclude terms over their column), then the narrowing
 * filters (`search`, location, dates, buying signals, contact and company details), all ANDed.
 */
export function searchCondition(filters: SearchFilters): Condition {
  const group = filters.orColumns;
  const all: Condition[] = [];

  const phase1: Condition[] = filters.positiveKeywords.map((term) => termMatchesAny(group, term));
  for (const column of TERM_COLUMNS) {
    const terms = filters.includeTerms[column];
    if (!terms || terms.length === 0) continue;
    const matches = terms.map((term) => termMatchesAny([column], term));
    // In the OR group: one more way to be included. Outside it: required (any of its terms).
    if (group.includes(column)) phase1.push(...matches);
    else all.push(or(matches));
  }
  if (phase1.length > 0) all.unshift(or(phase1));

  for (const term of filters.negativeKeywords) all.push(sql<SqlBool>`not ${termMatchesAny(group, term)}`);
  for (const column of TERM_COLUMNS) {
    for (const term of filters.excludeTerms[column] ?? []) {
      all.push(sql<SqlBool>`not ${termMatchesAny([column], term)}`);
    }
  }
  all.push(...narrowingConditions(filters));
  return and(all);
}

/** The filters besides keywords and column terms (all of them read `leads` columns). */
function narrowingConditions(filters: SearchFilters): Condition[] {
  const all: Condition[] = [];
  if (filters.search !== null) {
    const pattern = plainPattern(filters.search);
    all.push(or(SEARCH_COLUMNS.map((c) => like(COLUMN_TEXT[c].text, pattern))));
  }
  if (filters.stateInclude.length > 0) {
    all.push(sql<SqlBool>`upper(leads.state) in (${sql.join(filters.stateInclude)})`);
  }
  if (filters.stateExclude.length > 0) {
    all.push(sql<SqlBool>`coalesce(upper(leads.state), '') not in (${sql.join(filters.stateExclude)})`);
  }
  if (filters.cityInclude.length > 0) all.push(containsAny("city", filters.cityInclude));
  if (filters.cityExclude.length > 0) all.push(sql<SqlBool>`not ${containsAny("city", filters.cityExclude)}`);
  if (filters.streetInclude.length > 0) all.push(containsAny("street", filters.streetInclude));
  if (filters.streetExclude.length > 0) {
    all.push(sql<SqlBool>`not ${containsAny("street", filters.streetExclude)}`);
  }
  if (filters.zipInclude.length > 0) all.push(or(filters.zipInclude.map(zipMatches)));
  if (filters.zipExclude.length > 0) all.push(sql<SqlBool>`not ${or(filters.zipExclude.map(zipMatches))}`);
  for (const { key, column, kind } of EMPTY_FILTERS) {
    const empty = filters.emptyFilters[key];
    if (empty) all.push(emptyCondition(empty, columnEmpty(column, kind)));
  }

  for (const filter of DATE_FILTERS) {
    const range = filters.dates[filter.key];
    const { column, date } = DATE_COLUMNS[filter.key];
    if (range) all.push(...dateConditions(column, range, filter.wholeDayTo, date));
  }
  if (filters.buyingSignalTypes.length > 0) {
    all.push(
      sql<SqlBool>`leads.buying_signal_type && cast(${storedSignalTypes(filters.buyingSignalTypes)} as text[])`,
    );
  }

  all.push(...fieldTermConditions(filters.fieldTerms));
  for (const { key, column } of RANGES) {
    const range = filters.ranges[key];
    const ref = sql.ref(`leads.${column}`);
    if (range?.min != null) all.push(sql<SqlBool>`${ref} >= ${range.min}`);
    if (range?.max != null) all.push(sql<SqlBool>`${ref} <= ${range.max}`);
  }
  for (const { key, column, list } of VALUE_LISTS) {
    const values = filters.valueLists[key];
    if (!values) continue;
    const ref = sql.ref(`leads.${column}`);
    all.push(
      list
        ? sql<SqlBool>`exists (select 1 from unnest(${ref}) as v(x) where lower(v.x) in (${lowerAll(values)}))`
        : sql<SqlBool>`lower(${ref}) in (${lowerAll(values)})`,
    );
  }
  if (filters.websiteSchemaFilter.length > 0) {
    const x = sql<string>`lower(v.x)`;
    all.push(
      sql<SqlBool>`exists (select 1 from unnest(leads.website_schema_types) as v(x) where ${or(
        filters.websiteSchemaFilter.map((t) => like(x, plainPattern(t))),
      )})`,
    );
  }
  if (filters.redirect === "yes") all.push(sql<SqlBool>`leads.redirect is true`);
  if (filters.redirect === "no") all.push(sql<SqlBool>`leads.redirect is not true`);
  return all;
}

/**
 * The column a search sorts by (`sortBy` is a resolved field name): a single-valued field's
 * column, or a list's items joined with `, ` (no items: no value, sorted last).
 */
export function sortColumn(filters: SearchFilters): RawBuilder<unknown> {
  const field = resolveLeadField(filters.sortBy);
  if (!field?.column) throw new Error(`not a sortable field: ${filters.sortBy}`);
  const ref = sql.ref(`leads.${field.column}`);
  return field.type === "list" ? sql`nullif(array_to_string(${ref}, ', '), '')` : ref;
}
