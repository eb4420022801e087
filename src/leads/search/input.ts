import type { ErrorDetail } from "../../http/errors.js";

/** Most terms one list parameter may hold (keeps the generated SQL bounded). */
export const MAX_TERMS = 1000;
/** Longest term accepted. */
export const MAX_TERM_LENGTH = 500;

/** Where the filters come from: query parameters (`GET /leads`, preview) or a JSON object. */
export type FiltersForm = "query" | "body";

/**
 * Raw query input: the request's original URL (or its query string), a URLSearchParams, or a
 * query object (`req.query`: values are strings or string arrays).
 */
export type QueryInput = string | URLSearchParams | Record<string, unknown>;

/** The problems found so far, each with its parameter's path. */
export class Problems {
  readonly details: ErrorDetail[] = [];
  constructor(private readonly prefix: string[]) {}
  add(name: string, message: string): void {
    this.details.push({ path: [...this.prefix, name], message });
  }
}

/** Raw values of one form, before validation. */
export type RawValues = Map<string, unknown>;

/** The raw values of a query: a repeated parameter gives an array of its values. */
export function queryValues(input: QueryInput): RawValues {
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

/**
 * How a list parameter is written. In a query every list is comma-separated or a JSON array
 * string. In a body: `array` a JSON array only; `json` also a JSON array string; `comma` also a
 * comma-separated string (pieces trimmed) or a JSON array string.
 */
export type BodyListForm = "array" | "json" | "comma";

const LIST_MESSAGE = "must be comma-separated values or a JSON array of strings";

/** Splits one raw query value: a JSON array string (`["a","b"]`) or comma-separated text. */
function splitText(raw: string, name: string, problems: Problems, message = LIST_MESSAGE): string[] | null {
  const text = raw.trim();
  if (text.startsWith("[") && text.endsWith("]")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      problems.add(name, message);
      return null;
    }
    if (!Array.isArray(parsed) || parsed.some((v) => typeof v !== "string" && typeof v !== "number")) {
      problems.add(name, message);
      return null;
    }
    return parsed.map((v) => String(v));
  }
  return text.split(",");
}

/** The query form's raw strings of one parameter (a repeated parameter adds its values). */
function queryStrings(value: unknown, name: string, problems: Problems, message: string): string[] | null {
  const parts = Array.isArray(value) ? value : [value];
  if (parts.some((part) => typeof part !== "string")) {
    problems.add(name, message);
    return null;
  }
  return parts as string[];
}

/** A list parameter's raw terms (not yet trimmed), or null after a problem. */
export function rawList(
  value: unknown,
  form: FiltersForm,
  bodyForm: BodyListForm,
  name: string,
  problems: Problems,
): string[] | null {
  if (value === undefined || value === null) return [];
  if (form === "body") {
    if (Array.isArray(value)) {
      if (value.some((v) => typeof v !== "string")) {
        problems.add(name, "must be an array of strings");
        return null;
      }
      return value as string[];
    }
    if (typeof value === "string" && bodyForm === "comma") return splitText(value, name, problems);
    if (typeof value === "string" && bodyForm === "json") {
      const text = value.trim();
      if (text.startsWith("[") && text.endsWith("]")) {
        return splitText(text, name, problems, "must be an array of strings or a JSON array string");
      }
      if (text === "") return [];
    }
    problems.add(
      name,
      bodyForm === "array"
        ? "must be an array of strings"
        : bodyForm === "json"
          ? "must be an array of strings or a JSON array string"
          : "must be an array of strings or a comma-separated string",
    );
    return null;
  }
  const parts = queryStrings(value, name, problems, LIST_MESSAGE);
  if (!parts) return null;
  const out: string[] = [];
  for (const part of parts) {
    const list = splitText(part, name, problems);
    if (!list) return null;
    out.push(...list);
  }
  return out;
}

/** Trims terms, drops empty ones, removes duplicates (keeping the first), and checks bounds. */
export function cleanTerms(terms: string[], name: string, problems: Problems): string[] {
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

/** A list parameter, read, trimmed and bounded (empty when absent or after a problem). */
export function listParam(
  values: RawValues,
  name: string,
  form: FiltersForm,
  bodyForm: BodyListForm,
  problems: Problems,
): string[] {
  const raw = rawList(values.get(name), form, bodyForm, name, problems);
  return raw ? cleanTerms(raw, name, problems) : [];
}

function rawScalar(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 1 ? value[0] : value;
  return value;
}

/** Bounds of a numeric parameter. */
export interface NumberBounds {
  min?: number;
  max?: number;
  integer: boolean;
}

/** A number: a JSON number in a body, a numeric string in a query; null when absent. */
export function numberParam(
  values: RawValues,
  name: string,
  form: FiltersForm,
  bounds: NumberBounds,
  problems: Problems,
): number | null {
  const raw = rawScalar(values.get(name));
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

/** A string; null when absent. */
export function stringParam(values: RawValues, name: string, problems: Problems): string | null {
  const raw = rawScalar(values.get(name));
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== "string") {
    problems.add(name, "must be a string");
    return null;
  }
  return raw;
}

/** One of `allowed` (exact); null when absent or empty. */
export function enumParam<T extends string>(
  values: RawValues,
  name: string,
  allowed: readonly T[],
  problems: Problems,
): T | null {
  const raw = stringParam(values, name, problems);
  if (raw === null || raw.trim() === "") return null;
  const found = allowed.find((a) => a === raw.trim());
  if (!found) problems.add(name, `must be one of ${allowed.join(", ")}`);
  return found ?? null;
}

/** `only_empty` keeps leads without a value; `exclude_empty` keeps leads with one. */
export const EMPTY_FILTER_VALUES = ["only_empty", "exclude_empty"] as const;
export type EmptyFilter = (typeof EMPTY_FILTER_VALUES)[number];

/**
 * The query form's items of a term-item list: each raw value is a JSON array string (items
 * strings or objects) or comma-separated text in which a `{...}` object is one item, commas inside
 * it included.
 */
export function queryTermItems(value: unknown, name: string, problems: Problems): unknown[] | null {
  const message = 'must be a JSON array of strings or {"v": "text", "m": "contains"|"starts"|"ends"} objects';
  const parts = queryStrings(value, name, problems, message);
  if (!parts) return null;
  const out: unknown[] = [];
  for (const part of parts) {
    const text = part.trim();
    const pieces = text.startsWith("[") && text.endsWith("]") ? [text] : splitOutsideBraces(text);
    for (const piece of pieces) {
      const p = piece.trim();
      if (!(p.startsWith("[") || p.startsWith("{"))) {
        out.push(p);
        continue;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(p);
      } catch {
        problems.add(name, message);
        return null;
      }
      if (Array.isArray(parsed) && p.startsWith("[")) out.push(...parsed);
      else out.push(parsed);
    }
  }
  return out;
}

/** Splits at the commas outside `{...}` objects (and outside their quoted strings). */
function splitOutsideBraces(text: string): string[] {
  const pieces: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === "\\") i += 1;
      else if (c === '"') quoted = false;
    } else if (c === '"' && depth > 0) quoted = true;
    else if (c === "{") depth += 1;
    else if (c === "}" && depth > 0) depth -= 1;
    else if (c === "," && depth === 0) {
      pieces.push(text.slice(start, i));
      start = i + 1;
    }
  }
  pieces.push(text.slice(start));
  return pieces;
}
