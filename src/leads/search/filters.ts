import { describeDetails, errors, type ErrorDetail } from "../../http/errors.js";
import { resolveLeadField } from "../fields.js";

/** Columns that can be searched with terms (the OR group members and the include/exclude terms). */
export const TERM_COLUMNS = [
  "registeredUrl",
  "crawledUrl",
  "companyName",
  "aiCategoryEstimation",
  "description",
  "city",
  "street",
  "phone",
  "email",
] as const;
export type TermColumn = (typeof TERM_COLUMNS)[number];

/** The default OR group of phase 1: the four searched columns (docs/leads.md, search). */
export const DEFAULT_OR_COLUMNS: readonly TermColumn[] = [
  "registeredUrl",
  "crawledUrl",
  "companyName",
  "aiCategoryEstimation",
];

/** Column-specific term parameters: `<prefix>IncludeTerms` / `<prefix>ExcludeTerms` and their column. */
export const TERM_PARAMETERS = [
  { prefix: "name", column: "companyName" },
  { prefix: "url", column: "registeredUrl" },
  { prefix: "crawledUrl", column: "crawledUrl" },
  { prefix: "description", column: "description" },
  { prefix: "city", column: "city" },
  { prefix: "street", column: "street" },
  { prefix: "phone", column: "phone" },
  { prefix: "email", column: "email" },
] as const satisfies readonly { prefix: string; column: TermColumn }[];
type TermPrefix = (typeof TERM_PARAMETERS)[number]["prefix"];

type IncludeParam = `${TermPrefix}IncludeTerms`;
type ExcludeParam = `${TermPrefix}ExcludeTerms`;

/** Every list-valued search parameter. */
export const LIST_PARAMETERS = [
  "positiveKeywords",
  "negativeKeywords",
  "orColumns",
  ...TERM_PARAMETERS.flatMap((p) => [`${p.prefix}IncludeTerms`, `${p.prefix}ExcludeTerms`] as const),
  "stateInclude",
  "stateExclude",
  "cityInclude",
  "cityExclude",
  "zipInclude",
  "zipExclude",
  "websiteSchemaFilter",
] as const;
type ListParameter = (typeof LIST_PARAMETERS)[number];

/** Most terms one list parameter may hold (keeps the generated SQL bounded). */
export const MAX_TERMS = 1000;
/** Longest term accepted. */
export const MAX_TERM_LENGTH = 500;
/** Largest page size. */
export const MAX_LIMIT = 1000;
export const DEFAULT_LIMIT = 100;
export const DEFAULT_SORT_BY = "lastBuyingSignal";

/** Column-specific terms: an include term list and an exclude term list per column. */
export type ColumnTerms = Partial<Record<TermColumn, string[]>>;

/** Parsed, normalised search parameters (the domain form used by the query builder). */
export interface SearchFilters {
  /** Trimmed, non-empty terms. */
  positiveKeywords: string[];
  negativeKeywords: string[];
  /** Resolved camelCase column names, without duplicates; the default four when not given. */
  orColumns: TermColumn[];
  /** Include terms per column (only columns with at least one term). */
  includeTerms: ColumnTerms;
  /** Exclude terms per column (only columns with at least one term). */
  excludeTerms: ColumnTerms;
  /** Upper-cased two-letter codes. */
  stateInclude: string[];
  stateExclude: string[];
  /** Whole city names as given (compared case-insensitively). */
  cityInclude: string[];
  cityExclude: string[];
  /** ZIP prefixes. */
  zipInclude: string[];
  zipExclude: string[];
  minStars: number | null;
  maxStars: number | null;
  minReviewCount: number | null;
  maxReviewCount: number | null;
  /** Exact schema.org type names. */
  websiteSchemaFilter: string[];
  /** camelCase name of a sortable lead field. */
  sortBy: string;
  sortOrder: "asc" | "desc";
  page: number;
  limit: number;
  /** Always `other`: any value resolves to the Main database. */
  database: "other";
}

/** Where the filters come from: query parameters (`GET /leads`, preview) or a JSON object. */
export type FiltersForm = "query" | "body";

/**
 * Raw query input: the request's original URL (or its query string), a URLSearchParams, or a
 * query object (`req.query`: values are strings or string arrays).
 */
export type QueryInput = string | URLSearchParams | Record<string, unknown>;

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
}

const INCLUDE_PARAMS = TERM_PARAMETERS.map((p) => ({
  name: `${p.prefix}IncludeTerms` as IncludeParam,
  column: p.column,
}));
const EXCLUDE_PARAMS = TERM_PARAMETERS.map((p) => ({
  name: `${p.prefix}ExcludeTerms` as ExcludeParam,
  column: p.column,
}));

/** Names of the positive filters: `positiveKeywords` and every `...IncludeTerms` parameter. */
export const POSITIVE_PARAMETERS: readonly string[] = [
  "positiveKeywords",
  ...INCLUDE_PARAMS.map((p) => p.name),
];

class Problems {
  readonly details: ErrorDetail[] = [];
  constructor(private readonly prefix: string[]) {}
  add(name: string, message: string): void {
    this.details.push({ path: [...this.prefix, name], message });
  }
}

/** Raw values of one form, before validation: lists as unknown, scalars as unknown. */
type RawValues = Map<string, unknown>;

function queryValues(input: QueryInput): RawValues {
  const values: RawValues = new Map();
  if (typeof input === "string" || input instanceof URLSearchParams) {
    let params: URLSearchParams;
    if (input instanceof URLSearchParams) params = input;
    else {
      const q = input.indexOf("?");
      params = new URLSearchParams(q >= 0 ? input.slice(q + 1) : input.includes("=") ? input : "");
    }
    for (const [key, value] of params) {
      const prior = values.get(key) as string[] | undefined;
      values.set(key, prior ? [...prior, value] : [value]);
    }
  } else {
    // A validator-coerced object: a list it split at commas is joined back, so a JSON array string
    // is read whole again.
    for (const [key, value] of Object.entries(input)) {
      values.set(key, Array.isArray(value) ? value.map(String).join(",") : value);
    }
  }
  return values;
}

/** Splits one raw query value: a JSON array string (`["a","b"]`) or comma-separated text. */
function splitQueryList(raw: string, name: string, problems: Problems): string[] | null {
  const text = raw.trim();
  if (text.startsWith("[") && text.endsWith("]")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      problems.add(name, "must be comma-separated values or a JSON array of strings");
      return null;
    }
    if (!Array.isArray(parsed) || parsed.some((v) => typeof v !== "string" && typeof v !== "number")) {
      problems.add(name, "must be comma-separated values or a JSON array of strings");
      return null;
    }
    return parsed.map((v) => String(v));
  }
  return text.split(",");
}

function rawList(value: unknown, form: FiltersForm, name: string, problems: Problems): string[] | null {
  if (value === undefined || value === null) return [];
  if (form === "body") {
    if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
      problems.add(name, "must be an array of strings");
      return null;
    }
    return value as string[];
  }
  // Query form: one or more raw strings (a repeated parameter adds its values).
  const parts = Array.isArray(value) ? value : [value];
  const out: string[] = [];
  for (const part of parts) {
    if (typeof part !== "string") {
      problems.add(name, "must be comma-separated values or a JSON array of strings");
      return null;
    }
    const list = splitQueryList(part, name, problems);
    if (!list) return null;
    out.push(...list);
  }
  return out;
}

/** Trims terms, drops empty ones, removes duplicates (keeping the first), and checks bounds. */
function cleanTerms(terms: string[], name: string, problems: Problems): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const term of terms) {
    const t = term.trim();
    if (t.length === 0 || seen.has(t)) continue;
    if (t.length > MAX_TERM_LENGTH) {
      problems.add(name, `each value must be at most ${MAX_TERM_LENGTH} characters`);
      return [];
    }
    seen.add(t);
    out.push(t);
  }
  if (out.length > MAX_TERMS) {
    problems.add(name, `at most ${MAX_TERMS} values`);
    return [];
  }
  return out;
}

function rawScalar(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 1 ? value[0] : value;
  return value;
}

function numberParam(
  value: unknown,
  form: FiltersForm,
  name: string,
  bounds: { min?: number; max?: number; integer: boolean },
  problems: Problems,
): number | null {
  const raw = rawScalar(value);
  if (raw === undefined || raw === null || (form === "query" && raw === "")) return null;
  let n: number;
  if (typeof raw === "number") n = raw;
  else if (form === "query" && typeof raw === "string" && raw.trim() !== "") n = Number(raw);
  else n = Number.NaN;
  const kind = bounds.integer ? "an integer" : "a number";
  if (!Number.isFinite(n) || (bounds.integer && !Number.isInteger(n))) {
    problems.add(name, `must be ${kind}`);
    return null;
  }
  if (bounds.integer && Math.abs(n) > 2147483647) {
    problems.add(name, "must be a 32-bit integer");
    return null;
  }
  if (bounds.min !== undefined && n < bounds.min) {
    problems.add(name, `must be >= ${bounds.min}`);
    return null;
  }
  if (bounds.max !== undefined && n > bounds.max) {
    problems.add(name, `must be <= ${bounds.max}`);
    return null;
  }
  return n;
}

function stringParam(value: unknown, name: string, problems: Problems): string | null {
  const raw = rawScalar(value);
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== "string") {
    problems.add(name, "must be a string");
    return null;
  }
  return raw;
}

/** Resolves `orColumns` names (camelCase or database-style alias) to searchable columns. */
function resolveOrColumns(names: string[], problems: Problems): TermColumn[] {
  const out: TermColumn[] = [];
  for (const name of names) {
    const field = resolveLeadField(name);
    const column = TERM_COLUMNS.find((c) => c === field?.name);
    if (!column) {
      problems.add(
        "orColumns",
        `unknown column "${name}"; allowed: ${TERM_COLUMNS.join(", ")} (or their database-style aliases)`,
      );
      continue;
    }
    if (!out.includes(column)) out.push(column);
  }
  return out;
}

/**
 * Parses and validates lead search parameters.
 *
 * - `form: "query"`: `input` is the request's original URL (preferred: list values are re-read
 *   from the raw text, so a JSON array string such as `["plumb","roof"]` survives), a query string,
 *   a URLSearchParams or a `req.query`-like object. Lists are comma-separated or JSON array strings.
 * - `form: "body"`: `input` is a JSON object (export body, preset `filters`); lists must be
 *   arrays of strings, numbers JSON numbers. Members that are not search parameters are ignored.
 *
 * Throws 400 `validation_error` with one `details` entry `{path, message}` per problem, also when
 * there is no positive filter (`positiveKeywords` or any `...IncludeTerms`).
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

  const lists = new Map<ListParameter, string[]>();
  for (const name of LIST_PARAMETERS) {
    const raw = rawList(values.get(name), form, name, problems);
    lists.set(name, raw ? cleanTerms(raw, name, problems) : []);
  }
  const list = (name: ListParameter): string[] => lists.get(name) ?? [];

  const orNames = list("orColumns");
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

  const states = (name: "stateInclude" | "stateExclude"): string[] => {
    const out: string[] = [];
    for (const s of list(name)) {
      if (!/^[A-Za-z]{2}$/.test(s)) {
        problems.add(name, `"${s}" is not a two-letter state code`);
        continue;
      }
      const upper = s.toUpperCase();
      if (!out.includes(upper)) out.push(upper);
    }
    return out;
  };

  const minStars = numberParam(
    values.get("minStars"),
    form,
    "minStars",
    { min: 0, max: 5, integer: false },
    problems,
  );
  const maxStars = numberParam(
    values.get("maxStars"),
    form,
    "maxStars",
    { min: 0, max: 5, integer: false },
    problems,
  );
  const minReviewCount = numberParam(
    values.get("minReviewCount"),
    form,
    "minReviewCount",
    { min: 0, integer: true },
    problems,
  );
  const maxReviewCount = numberParam(
    values.get("maxReviewCount"),
    form,
    "maxReviewCount",
    { min: 0, integer: true },
    problems,
  );
  const page = numberParam(values.get("page"), form, "page", { min: 1, integer: true }, problems) ?? 1;
  const limit =
    numberParam(values.get("limit"), form, "limit", { min: 1, max: MAX_LIMIT, integer: true }, problems) ??
    DEFAULT_LIMIT;

  let sortBy = DEFAULT_SORT_BY;
  const sortByRaw = stringParam(values.get("sortBy"), "sortBy", problems);
  if (sortByRaw !== null && sortByRaw.trim() !== "") {
    const field = resolveLeadField(sortByRaw);
    if (!field || !field.sortable || field.column === null) {
      problems.add("sortBy", `"${sortByRaw}" is not a sortable lead field`);
    } else sortBy = field.name;
  }

  let sortOrder: "asc" | "desc" = "desc";
  const sortOrderRaw = stringParam(values.get("sortOrder"), "sortOrder", problems);
  if (sortOrderRaw !== null) {
    if (sortOrderRaw === "asc" || sortOrderRaw === "desc") sortOrder = sortOrderRaw;
    else problems.add("sortOrder", "must be asc or desc");
  }

  // `database`: any value resolves to `other`; only its type is checked.
  stringParam(values.get("database"), "database", problems);

  const filters: SearchFilters = {
    positiveKeywords: list("positiveKeywords"),
    negativeKeywords: list("negativeKeywords"),
    orColumns,
    includeTerms,
    excludeTerms,
    stateInclude: states("stateInclude"),
    stateExclude: states("stateExclude"),
    cityInclude: list("cityInclude"),
    cityExclude: list("cityExclude"),
    zipInclude: list("zipInclude"),
    zipExclude: list("zipExclude"),
    minStars,
    maxStars,
    minReviewCount,
    maxReviewCount,
    websiteSchemaFilter: list("websiteSchemaFilter"),
    sortBy,
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
    return typeof v === "string" && v.split(",").some((t) => t.trim() !== "");
  });
}

/**
 * The canonical body form of parsed filters (JSON arrays, camelCase names, defaults spelled out),
 * for storing a preset or replaying a search.
 */
export function searchFiltersToJson(filters: SearchFilters): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (filters.positiveKeywords.length > 0) out.positiveKeywords = filters.positiveKeywords;
  if (filters.negativeKeywords.length > 0) out.negativeKeywords = filters.negativeKeywords;
  out.orColumns = filters.orColumns;
  for (const p of INCLUDE_PARAMS) {
    const terms = filters.includeTerms[p.column];
    if (terms && terms.length > 0) out[p.name] = terms;
  }
  for (const p of EXCLUDE_PARAMS) {
    const terms = filters.excludeTerms[p.column];
    if (terms && terms.length > 0) out[p.name] = terms;
  }
  for (const name of [
    "stateInclude",
    "stateExclude",
    "cityInclude",
    "cityExclude",
    "zipInclude",
    "zipExclude",
    "websiteSchemaFilter",
  ] as const) {
    if (filters[name].length > 0) out[name] = filters[name];
  }
  for (const name of ["minStars", "maxStars", "minReviewCount", "maxReviewCount"] as const) {
    if (filters[name] !== null) out[name] = filters[name];
  }
  out.sortBy = filters.sortBy;
  out.sortOrder = filters.sortOrder;
  out.page = filters.page;
  out.limit = filters.limit;
  out.database = filters.database;
  return out;
}
