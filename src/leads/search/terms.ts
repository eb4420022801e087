import { FILTERED_LEAD_FIELDS, type LeadField } from "../fields.js";
import {
  EMPTY_FILTER_VALUES,
  MAX_TERM_LENGTH,
  MAX_TERMS,
  enumParam,
  queryTermItems,
  type EmptyFilter,
  type FiltersForm,
  type Problems,
  type RawValues,
} from "./input.js";

/**
 * The contact and company-detail term filters (`<key>Include`, `<key>Exclude`,
 * `<key>EmptyFilter`), one set per field of the catalogue with a filter key (`FILTERED_LEAD_FIELDS`
 * in src/leads/fields.ts). Items are strings or `{"v": "text", "m": "contains"|"starts"|"ends"}`;
 * matching is case-insensitive and `*` is a literal character.
 */
export const TERM_MATCHES = ["contains", "starts", "ends"] as const;
export type TermMatch = (typeof TERM_MATCHES)[number];

/** One item of a term filter. */
export interface TermItem {
  /** The text, trimmed. */
  v: string;
  m: TermMatch;
}

/** The term filters of one field. */
export interface FieldTermFilter {
  /** Lead is kept only when any item matches one of the field's values. */
  include: TermItem[];
  /** Lead is removed when any item matches one of the field's values. */
  exclude: TermItem[];
  empty: EmptyFilter | null;
}

/** Parameter names of a field's term filters. */
export const termParameterNames = (key: string) => ({
  include: `${key}Include`,
  exclude: `${key}Exclude`,
  empty: `${key}EmptyFilter`,
});

/** Whether a field's term filters compare phone numbers by their digits (docs/leads.md). */
export const isPhoneField = (field: LeadField) => field.contact === "phone";

const ITEM_MESSAGE = 'each item must be a string or {"v": "text", "m": "contains"|"starts"|"ends"}';

function termItems(value: unknown, form: FiltersForm, name: string, problems: Problems): TermItem[] {
  if (value === undefined || value === null) return [];
  let raw: unknown[] | null;
  if (form === "query") raw = queryTermItems(value, name, problems);
  else if (Array.isArray(value)) raw = value;
  else {
    problems.add(name, 'must be an array of strings or {"v", "m"} objects');
    raw = null;
  }
  if (!raw) return [];
  const out: TermItem[] = [];
  const seen = new Set<string>();
  for (const entry of raw) {
    let item: TermItem;
    if (typeof entry === "string" || (form === "query" && typeof entry === "number")) {
      item = { v: String(entry).trim(), m: "contains" };
    } else if (typeof entry === "object" && entry !== null && !Array.isArray(entry)) {
      const { v, m, ...rest } = entry as Record<string, unknown>;
      const match = m === undefined || m === null ? "contains" : TERM_MATCHES.find((x) => x === m);
      if (typeof v !== "string" || !match || Object.keys(rest).length > 0) {
        problems.add(name, ITEM_MESSAGE);
        return [];
      }
      item = { v: v.trim(), m: match };
    } else {
      problems.add(name, ITEM_MESSAGE);
      return [];
    }
    if (item.v.length === 0) continue;
    if (item.v.length > MAX_TERM_LENGTH) {
      problems.add(name, `each value must be at most ${MAX_TERM_LENGTH} characters`);
      return [];
    }
    const key = `${item.m}:${item.v}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(item);
  }
  if (out.length > MAX_TERMS) {
    problems.add(name, `at most ${MAX_TERMS} values`);
    return [];
  }
  return out;
}

/** Reads the term filters of every filtered field; only fields with a filter are in the result. */
export function parseFieldTerms(
  values: RawValues,
  form: FiltersForm,
  problems: Problems,
): Record<string, FieldTermFilter> {
  const out: Record<string, FieldTermFilter> = {};
  for (const field of FILTERED_LEAD_FIELDS) {
    const names = termParameterNames(field.filterKey);
    const filter: FieldTermFilter = {
      include: termItems(values.get(names.include), form, names.include, problems),
      exclude: termItems(values.get(names.exclude), form, names.exclude, problems),
      empty: enumParam(values, names.empty, EMPTY_FILTER_VALUES, problems),
    };
    if (filter.include.length > 0 || filter.exclude.length > 0 || filter.empty !== null) {
      out[field.filterKey] = filter;
    }
  }
  return out;
}

/** The canonical JSON of term items: plain strings for `contains`, `{v, m}` otherwise. */
export function termItemsToJson(items: TermItem[]): (string | { v: string; m: TermMatch })[] {
  return items.map((item) => (item.m === "contains" ? item.v : { v: item.v, m: item.m }));
}
