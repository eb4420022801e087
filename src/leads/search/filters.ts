import { describeDetails, errors } from "../../http/errors.js";
import { resolveLeadField } from "../fields.js";
import {
  DEFAULT_OR_COLUMNS,
  TERM_COLUMNS,
  TERM_PARAMETERS,
  resolveTermColumn,
  type TermColumn,
} from "./columns.js";
import { DATE_FILTERS, endOf, parseDateBound, type DateFilterKey, type DateRange } from "./dates.js";
import {
  EMPTY_FILTER_VALUES,
  MAX_TERM_LENGTH,
  Problems,
  enumParam,
  listParam,
  numberParam,
  queryValues,
  stringParam,
  type EmptyFilter,
  type FiltersForm,
  type QueryInput,
  type RawValues,
} from "./input.js";
import {
  EMPTY_FILTERS,
  RANGES,
  REDIRECT_VALUES,
  VALUE_LISTS,
  type EmptyFilterKey,
  type NumberRange,
  type RangeKey,
  type RedirectFilter,
  type ValueListKey,
} from "./narrowing.js";
import { BUYING_SIGNAL_TYPES, isBuyingSignalType } from "./signal-types.js";
import { parseFieldTerms, termItemsToJson, termParameterNames, type FieldTermFilter } from "./terms.js";

export { DEFAULT_OR_COLUMNS, TERM_COLUMNS, TERM_PARAMETERS, type TermColumn } from "./columns.js";
export { MAX_TERMS, MAX_TERM_LENGTH, type FiltersForm, type QueryInput } from "./input.js";

/** Largest page size. */
export const MAX_LIMIT = 1000;
export const DEFAULT_LIMIT = 100;
export const DEFAULT_SORT_BY = "lastBuyingSignal";

/** Column-specific terms: an include term list and an exclude term list per column. */
export type ColumnTerms = Partial<Record<TermColumn, string[]>>;

/** Parsed, normalised search parameters (the domain form used by the query builder). */
export interface SearchFilters {
  /** Trimmed, non-empty terms (`*` a wildcard, and a space in URL columns). */
  positiveKeywords: string[];
  negativeKeywords: string[];
  /** Resolved term columns, without duplicates; the default four when not given. */
  orColumns: TermColumn[];
  /** Include terms per column (only columns with at least one term). */
  includeTerms: ColumnTerms;
  /** Exclude terms per column (only columns with at least one term). */
  excludeTerms: ColumnTerms;
  /** Plain substring over name, both URLs, description, city and primary phone; null when none. */
  search: string | null;
  /** Upper-cased two-letter codes. */
  stateInclude: string[];
  stateExclude: string[];
  /** City substrings (case-insensitive). */
  cityInclude: string[];
  cityExclude: string[];
  /** ZIP codes (5 digits or ZIP+4: that ZIP) or prefixes (1-4 digits). */
  zipInclude: string[];
  zipExclude: string[];
  /** Street substrings (case-insensitive). */
  streetInclude: string[];
  streetExclude: string[];
  /** Empty-value filters of single columns (`stateEmptyFilter`, ...). */
  emptyFilters: Partial<Record<EmptyFilterKey, EmptyFilter>>;
  /** Date ranges (only filters with a bound). */
  dates: Partial<Record<DateFilterKey, DateRange>>;
  /** Buying signal types of which a lead must have any. */
  buyingSignalTypes: string[];
  /** Contact and company-detail term filters, by filter key (fields.ts). */
  fieldTerms: Record<string, FieldTermFilter>;
  /** Numeric ranges (only ranges with a bound). */
  ranges: Partial<Record<RangeKey, NumberRange>>;
  /** Exact value lists (only non-empty lists). */
  valueLists: Partial<Record<ValueListKey, string[]>>;
  /** Schema type substrings; a lead matches when any of its types contains any of them. */
  websiteSchemaFilter: string[];
  redirect: RedirectFilter | null;
  /** camelCase name of a sortable lead field. */
  sortBy: string;
  sortOrder: "asc" | "desc";
  page: number;
  limit: number;
  /** Always `other`: any value resolves to the Main database. */
  database: "other";
}

export interface ParseOptions {
  /**
   * Path prefix of `details` entries. Default `["query"]` for the query form and `["body"]` for
   * the body form (a preset passes `["body", "filters"]`).
   */
  path?: string[];
  /**
   * Whether a missing positive filter is a 400 (default true: exports, presets). `GET /leads` and
   * preview pass false and answer `requiresKeywords: true` instead (check hasPositiveFilter).
   */
  requirePositive?: boolean;
  /** The time relative dates (`rel:30d`) are resolved against; default now. */
  now?: Date;
}

const INCLUDE_PARAMS = TERM_PARAMETERS.map((p) => ({ name: `${p.prefix}IncludeTerms`, column: p.column }));
const EXCLUDE_PARAMS = TERM_PARAMETERS.map((p) => ({ name: `${p.prefix}ExcludeTerms`, column: p.column }));

/** Names of the positive filters: `positiveKeywords` and every `...IncludeTerms` parameter. */
export const POSITIVE_PARAMETERS: readonly string[] = [
  "positiveKeywords",
  ...INCLUDE_PARAMS.map((p) => p.name),
];

/** Plain string lists of location filters (substrings, except ZIPs). */
const LOCATION_LISTS = [
  "cityInclude",
  "cityExclude",
  "zipInclude",
  "zipExclude",
  "streetInclude",
  "streetExclude",
] as const;

const ZIP = /^(\d{1,5}|\d{5}-?\d{4})$/;

/** Resolves `orColumns` names (ours or the real service's, any case) to term columns. */
function resolveOrColumns(names: string[], problems: Problems): TermColumn[] {
  const out: TermColumn[] = [];
  for (const name of names) {
    const column = resolveTermColumn(name);
    if (!column) {
      problems.add(
        "orColumns",
        `unknown column "${name}"; allowed: ${TERM_COLUMNS.join(", ")}, or their w* names (wCompanyName, wOgrequestedUrl, ...)`,
      );
      continue;
    }
    if (!out.includes(column)) out.push(column);
  }
  return out;
}

function states(values: RawValues, name: string, form: FiltersForm, problems: Problems): string[] {
  const out: string[] = [];
  for (const s of listParam(values, name, form, "comma", problems)) {
    if (!/^[A-Za-z]{2}$/.test(s)) {
      problems.add(name, `"${s}" is not a two-letter state code`);
      continue;
    }
    const upper = s.toUpperCase();
    if (!out.includes(upper)) out.push(upper);
  }
  return out;
}

/** The first of `names` that is present (the real service's name wins over our older one). */
const firstPresent = (values: RawValues, names: readonly string[]) =>
  names.find((n) => values.get(n) !== undefined && values.get(n) !== null) ?? null;

function dateRanges(
  values: RawValues,
  now: Date,
  problems: Problems,
): Partial<Record<DateFilterKey, DateRange>> {
  const out: Partial<Record<DateFilterKey, DateRange>> = {};
  for (const filter of DATE_FILTERS) {
    const range: DateRange = { from: null, to: null };
    for (const end of ["From", "To"] as const) {
      const name = firstPresent(
        values,
        filter.names.map((n) => `${n}${end}`),
      );
      if (name === null) continue;
      const raw = stringParam(values, name, problems);
      if (raw === null || raw.trim() === "") continue;
      const bound = parseDateBound(raw, now);
      if (typeof bound === "string") problems.add(name, bound);
      else if (end === "From") range.from = bound;
      else range.to = bound;
    }
    if (range.from && range.to && range.from.at >= endOf(range.to, filter.wholeDayTo)) {
      problems.add(`${filter.names[0]}From`, `must not be after ${filter.names[0]}To`);
    }
    if (range.from || range.to) out[filter.key] = range;
  }
  return out;
}

function buyingSignalTypes(values: RawValues, form: FiltersForm, problems: Problems): string[] {
  const name = firstPresent(values, ["buyingSignalTypeFilter", "updateReasonFilter"]);
  if (name === null) return [];
  const types = listParam(values, name, form, "comma", problems);
  const unknown = types.filter((type) => !isBuyingSignalType(type));
  if (unknown.length > 0) {
    problems.add(
      name,
      `unknown buying signal type "${unknown[0]}" (exact and case-sensitive); allowed: ${BUYING_SIGNAL_TYPES.join(", ")}`,
    );
    return [];
  }
  return types;
}

function ranges(
  values: RawValues,
  form: FiltersForm,
  problems: Problems,
): Partial<Record<RangeKey, NumberRange>> {
  const out: Partial<Record<RangeKey, NumberRange>> = {};
  for (const range of RANGES) {
    const min = numberParam(values, `min${range.key}`, form, range.bounds, problems);
    const max = numberParam(values, `max${range.key}`, form, range.bounds, problems);
    if (min !== null && max !== null && min > max) {
      problems.add(`min${range.key}`, `must not be greater than max${range.key}`);
    }
    if (min !== null || max !== null) out[range.key] = { min, max };
  }
  return out;
}

function sortField(values: RawValues, problems: Problems): string {
  const raw = stringParam(values, "sortBy", problems);
  if (raw === null || raw.trim() === "") return DEFAULT_SORT_BY;
  const field = resolveLeadField(raw);
  // Single-valued fields, and list fields by their text form (wEmailSecurity).
  if (!field || field.column === null || !(field.sortable || field.type === "list")) {
    problems.add("sortBy", `"${raw}" is not a sortable lead field`);
    return DEFAULT_SORT_BY;
  }
  return field.name;
}

/**
 * Parses and validates lead search parameters (docs/leads.md, "Search parameters").
 *
 * - `form: "query"`: `input` is the request's original URL (preferred: list values are re-read
 *   from the raw text, so a JSON array string such as `["plumb","roof"]` survives), a query string,
 *   a URLSearchParams or a `req.query`-like object. Lists are comma-separated or JSON array strings.
 * - `form: "body"`: `input` is a JSON object (export filters, preset `filters`); lists are arrays
 *   (some also a string, see docs), numbers JSON numbers. Members that are not search parameters
 *   are ignored.
 *
 * Throws 400 `validation_error` with one `details` entry `{path, message}` per problem, also when
 * there is no positive filter unless `requirePositive` is false.
 */
export function parseSearchFilters(
  input: unknown,
  form: FiltersForm,
  options: ParseOptions = {},
): SearchFilters {
  const problems = new Problems(options.path ?? [form]);
  let values: RawValues;
  if (form === "query") {
    values = queryValues((input ?? {}) as QueryInput);
  } else {
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      throw errors.validation("The search filters must be a JSON object.", [
        { path: options.path ?? ["body"], message: "must be an object" },
      ]);
    }
    values = new Map(Object.entries(input));
  }
  const list = (name: string) => listParam(values, name, form, "array", problems);

  const positiveKeywords = listParam(values, "positiveKeywords", form, "json", problems);
  const negativeKeywords = listParam(values, "negativeKeywords", form, "json", problems);
  const orNames = listParam(values, "orColumns", form, "json", problems);
  const orColumns = orNames.length > 0 ? resolveOrColumns(orNames, problems) : [...DEFAULT_OR_COLUMNS];

  const includeTerms: ColumnTerms = {};
  for (const p of INCLUDE_PARAMS) {
    const terms = list(p.name);
    if (terms.length > 0) includeTerms[p.column] = terms;
  }
  const excludeTerms: ColumnTerms = {};
  for (const p of EXCLUDE_PARAMS) {
    const terms = list(p.name);
    if (terms.length > 0) excludeTerms[p.column] = terms;
  }

  let search = stringParam(values, "search", problems)?.trim() || null;
  if (search !== null && search.length > MAX_TERM_LENGTH) {
    problems.add("search", `must be at most ${MAX_TERM_LENGTH} characters`);
    search = null;
  }

  const stateInclude = states(values, "stateInclude", form, problems);
  const stateExclude = states(values, "stateExclude", form, problems);
  const locations = Object.fromEntries(LOCATION_LISTS.map((name) => [name, list(name)])) as Record<
    (typeof LOCATION_LISTS)[number],
    string[]
  >;
  for (const name of ["zipInclude", "zipExclude"] as const) {
    const bad = locations[name].find((zip) => !ZIP.test(zip));
    if (bad !== undefined) {
      problems.add(name, `"${bad}" is not a ZIP code (5 digits or ZIP+4) or a ZIP prefix (1-4 digits)`);
    }
  }

  const emptyFilters: Partial<Record<EmptyFilterKey, EmptyFilter>> = {};
  for (const { key } of EMPTY_FILTERS) {
    const value = enumParam(values, `${key}EmptyFilter`, EMPTY_FILTER_VALUES, problems);
    if (value !== null) emptyFilters[key] = value;
  }
  const valueLists: Partial<Record<ValueListKey, string[]>> = {};
  for (const { key } of VALUE_LISTS) {
    const items = list(`${key}Values`);
    if (items.length > 0) valueLists[key] = items;
  }

  const page = numberParam(values, "page", form, { min: 1, integer: true }, problems) ?? 1;
  const limit =
    numberParam(values, "limit", form, { min: 1, max: MAX_LIMIT, integer: true }, problems) ?? DEFAULT_LIMIT;

  let sortOrder: "asc" | "desc" = "desc";
  const sortOrderRaw = stringParam(values, "sortOrder", problems);
  if (sortOrderRaw !== null) {
    if (sortOrderRaw === "asc" || sortOrderRaw === "desc") sortOrder = sortOrderRaw;
    else problems.add("sortOrder", "must be asc or desc");
  }

  // `database`: any value resolves to `other`; only its type is checked.
  stringParam(values, "database", problems);

  const filters: SearchFilters = {
    positiveKeywords,
    negativeKeywords,
    orColumns,
    includeTerms,
    excludeTerms,
    search,
    stateInclude,
    stateExclude,
    ...locations,
    emptyFilters,
    dates: dateRanges(values, options.now ?? new Date(), problems),
    buyingSignalTypes: buyingSignalTypes(values, form, problems),
    fieldTerms: parseFieldTerms(values, form, problems),
    ranges: ranges(values, form, problems),
    valueLists,
    websiteSchemaFilter: listParam(values, "websiteSchemaFilter", form, "comma", problems),
    redirect: enumParam(values, "redirectFilter", REDIRECT_VALUES, problems),
    sortBy: sortField(values, problems),
    sortOrder,
    page,
    limit,
    database: "other",
  };

  if (problems.details.length === 0 && options.requirePositive !== false && !hasPositiveFilter(filters)) {
    problems.add(
      "positiveKeywords",
      "at least one positive filter is required: positiveKeywords or an ...IncludeTerms parameter",
    );
  }
  if (problems.details.length > 0) {
    throw errors.validation(describeDetails(problems.details, "Invalid search parameters"), problems.details);
  }
  return filters;
}

/**
 * Whether the filters hold a positive filter: a positive keyword or any include term. Accepts the
 * parsed form or a raw body-form object (`{positiveKeywords: [...], nameIncludeTerms: [...]}`).
 */
export function hasPositiveFilter(filters: SearchFilters | Record<string, unknown>): boolean {
  if ("includeTerms" in filters && "orColumns" in filters && Array.isArray(filters.orColumns)) {
    const parsed = filters as SearchFilters;
    return (
      parsed.positiveKeywords.length > 0 || Object.values(parsed.includeTerms).some((t) => t && t.length > 0)
    );
  }
  const raw = filters as Record<string, unknown>;
  return POSITIVE_PARAMETERS.some((name) => {
    const v = raw[name];
    if (Array.isArray(v)) return v.some((t) => typeof t === "string" && t.trim() !== "");
    if (typeof v !== "string") return false;
    const text = v.trim();
    if (text.startsWith("[") && text.endsWith("]")) {
      try {
        const parsed: unknown = JSON.parse(text);
        return Array.isArray(parsed) && parsed.some((t) => typeof t === "string" && t.trim() !== "");
      } catch {
        return false;
      }
    }
    return text.split(",").some((t) => t.trim() !== "");
  });
}

/**
 * The canonical body form of parsed filters (JSON arrays, the real service's names, defaults
 * spelled out), for storing a preset or replaying a search: parseSearchFilters reads it back to
 * the same filters (relative dates stay relative).
 */
export function searchFiltersToJson(filters: SearchFilters): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const lists = (entries: [string, readonly unknown[] | undefined][]) => {
    for (const [name, value] of entries) if (value && value.length > 0) out[name] = value;
  };
  lists([
    ["positiveKeywords", filters.positiveKeywords],
    ["negativeKeywords", filters.negativeKeywords],
  ]);
  out.orColumns = filters.orColumns;
  lists(INCLUDE_PARAMS.map((p) => [p.name, filters.includeTerms[p.column]]));
  lists(EXCLUDE_PARAMS.map((p) => [p.name, filters.excludeTerms[p.column]]));
  if (filters.search !== null) out.search = filters.search;
  lists([
    ["stateInclude", filters.stateInclude],
    ["stateExclude", filters.stateExclude],
    ...LOCATION_LISTS.map((name): [string, string[]] => [name, filters[name]]),
    ["websiteSchemaFilter", filters.websiteSchemaFilter],
    ["buyingSignalTypeFilter", filters.buyingSignalTypes],
  ]);
  for (const { key } of EMPTY_FILTERS) {
    const value = filters.emptyFilters[key];
    if (value) out[`${key}EmptyFilter`] = value;
  }
  for (const filter of DATE_FILTERS) {
    const range = filters.dates[filter.key];
    if (range?.from) out[`${filter.names[0]}From`] = range.from.text;
    if (range?.to) out[`${filter.names[0]}To`] = range.to.text;
  }
  for (const [key, filter] of Object.entries(filters.fieldTerms)) {
    const names = termParameterNames(key);
    if (filter.include.length > 0) out[names.include] = termItemsToJson(filter.include);
    if (filter.exclude.length > 0) out[names.exclude] = termItemsToJson(filter.exclude);
    if (filter.empty !== null) out[names.empty] = filter.empty;
  }
  for (const { key } of RANGES) {
    const range = filters.ranges[key];
    if (range?.min != null) out[`min${key}`] = range.min;
    if (range?.max != null) out[`max${key}`] = range.max;
  }
  lists(
    VALUE_LISTS.map(({ key }): [string, string[] | undefined] => [`${key}Values`, filters.valueLists[key]]),
  );
  if (filters.redirect !== null) out.redirectFilter = filters.redirect;
  out.sortBy = filters.sortBy;
  out.sortOrder = filters.sortOrder;
  out.page = filters.page;
  out.limit = filters.limit;
  out.database = filters.database;
  return out;
}
