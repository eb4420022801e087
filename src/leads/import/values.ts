/**
 * Coercion of one raw value of an import record (a JSON value, or the string of a CSV cell) into
 * the value a lead column stores. Each parser returns the clean value or throws `ValueProblem`
 * with a message for the caller to prefix with the field name.
 */

/** What a field's value is wrong with; the message is read by the person who made the file. */
export class ValueProblem extends Error {}

/** Where a record came from: JSON values keep their types, CSV cells are all strings. */
export type RecordForm = "json" | "csv";

/** Reads one raw value of a field into the value its column stores, or throws ValueProblem. */
export type FieldParser = (value: unknown, form: RecordForm) => unknown;

const MAX_LIST_ITEMS = 100;
const MAX_ITEM_LENGTH = 500;

/** `undefined`, `null` and empty (or white-space) strings are all "no value". */
export function isBlank(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === "string" && value.trim() === "");
}

/** A trimmed string of at most `max` characters; integers are accepted where `allowNumber`. */
export function parseText(value: unknown, max: number, allowNumber = false): string {
  let text: string;
  if (typeof value === "string") text = value.trim();
  else if (allowNumber && typeof value === "number" && Number.isInteger(value)) text = String(value);
  else throw new ValueProblem(allowNumber ? "must be a string or an integer" : "must be a string");
  if (text.length > max) throw new ValueProblem(`must be at most ${max} characters`);
  return text;
}

/** A parser of trimmed text of at most `max` characters (integers accepted where `allowNumber`). */
export function textParser(max: number, allowNumber = false): FieldParser {
  return (value) => parseText(value, max, allowNumber);
}

/** A parser of trimmed text of at most `max` characters, stored in lower case (domain names). */
export function lowerTextParser(max: number): FieldParser {
  return (value) => parseText(value, max).toLowerCase();
}

const EMAIL = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/;

/** An e-mail address (kept as written, trimmed). */
export function parseEmail(value: unknown): string {
  const text = parseText(value, 254);
  if (!EMAIL.test(text)) throw new ValueProblem("must be an e-mail address");
  return text;
}

/** Two-letter codes of the US states, DC and the inhabited territories. */
export const US_STATE_CODES: ReadonlySet<string> = new Set(
  (
    "AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC " +
    "ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC PR VI GU AS MP"
  ).split(" "),
);

/** A two-letter US state code, any case on input, upper case stored. */
export function parseState(value: unknown): string {
  const code = parseText(value, 2_000).toUpperCase();
  if (!US_STATE_CODES.has(code)) throw new ValueProblem("must be a two-letter US state code, for example TX");
  return code;
}

const ZIP = /^\d{5}(-\d{4})?$/;

/** A US ZIP code: 5 digits or ZIP+4. */
export function parseZip(value: unknown): string {
  const text = parseText(value, 2_000, true);
  if (!ZIP.test(text)) throw new ValueProblem("must be a 5-digit ZIP code (or ZIP+4, 12345-6789)");
  return text;
}

function toNumber(value: unknown, form: RecordForm): number {
  if (typeof value === "number") return value;
  if (form === "csv" && typeof value === "string" && /^\s*[-+]?(\d+\.?\d*|\.\d+)\s*$/.test(value)) {
    return Number(value);
  }
  return Number.NaN;
}

/** A rating from 0 to 5. */
export function parseStars(value: unknown, form: RecordForm): number {
  const n = toNumber(value, form);
  if (!Number.isFinite(n) || n < 0 || n > 5) throw new ValueProblem("must be a number from 0 to 5");
  return n;
}

/** A parser of a number from `min` to `max` (coordinates). */
export function rangeParser(min: number, max: number): FieldParser {
  return (value, form) => {
    const n = toNumber(value, form);
    if (!Number.isFinite(n) || n < min || n > max) {
      throw new ValueProblem(`must be a number from ${min} to ${max}`);
    }
    return n;
  };
}

/** A whole number from 0 to 2,147,483,647 (an int4 column). */
export function parseCount(value: unknown, form: RecordForm): number {
  const n = toNumber(value, form);
  if (!Number.isInteger(n) || n < 0 || n > 2_147_483_647) {
    throw new ValueProblem("must be a whole number of at least 0");
  }
  return n;
}

const TRUE_WORDS = new Set(["true", "1", "yes", "y"]);
const FALSE_WORDS = new Set(["false", "0", "no", "n"]);

/** A boolean; in CSV `true/false`, `1/0`, `yes/no` (any case). */
export function parseBoolean(value: unknown, form: RecordForm): boolean {
  if (typeof value === "boolean") return value;
  if (form === "csv" && typeof value === "string") {
    const word = value.trim().toLowerCase();
    if (TRUE_WORDS.has(word)) return true;
    if (FALSE_WORDS.has(word)) return false;
  }
  throw new ValueProblem("must be true or false");
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function isRealDate(year: number, month: number, day: number): boolean {
  const d = new Date(Date.UTC(year, month - 1, day));
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
}

/** A calendar date `YYYY-MM-DD`. */
export function parsePlainDate(value: unknown): string {
  const text = parseText(value, 2_000);
  const m = DATE.exec(text);
  if (!m || !isRealDate(Number(m[1]), Number(m[2]), Number(m[3]))) {
    throw new ValueProblem("must be a date YYYY-MM-DD");
  }
  return text;
}

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * An ISO 8601 date-time, returned as a UTC ISO string. Without an offset it is read as UTC; a bare
 * date is midnight UTC.
 */
export function parseDateTime(value: unknown): string {
  const text = parseText(value, 2_000);
  const m = DATE_TIME.exec(text);
  const problem = () => new ValueProblem("must be an ISO 8601 date-time, for example 2026-03-01T12:00:00Z");
  if (!m || !isRealDate(Number(m[1]), Number(m[2]), Number(m[3]))) throw problem();
  if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59))
    throw problem();
  let iso = text.replace(" ", "T");
  if (m[4] === undefined) iso += "T00:00:00Z";
  else if (m[7] === undefined) iso += "Z";
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw problem();
  return new Date(ms).toISOString();
}

/**
 * A list of strings. JSON: an array of strings. CSV: a JSON array (`["a","b"]`) or items separated
 * by `|` or `;`. Items are trimmed; empty items are dropped.
 */
export function parseList(value: unknown, form: RecordForm): string[] {
  let items: unknown[];
  if (Array.isArray(value)) items = value;
  else if (form === "csv" && typeof value === "string") {
    const text = value.trim();
    if (text.startsWith("[")) {
      try {
        const parsed: unknown = JSON.parse(text);
        if (!Array.isArray(parsed)) throw new Error();
        items = parsed;
      } catch {
        throw new ValueProblem("must be a JSON array of strings or items separated by | or ;");
      }
    } else items = text.split(/[|;]/);
  } else throw new ValueProblem("must be an array of strings");
  if (items.length > MAX_LIST_ITEMS) throw new ValueProblem(`must have at most ${MAX_LIST_ITEMS} items`);
  const out: string[] = [];
  for (const item of items) {
    if (typeof item !== "string") throw new ValueProblem("must be an array of strings");
    const text = item.trim();
    if (text.length > MAX_ITEM_LENGTH) {
      throw new ValueProblem(`items must be at most ${MAX_ITEM_LENGTH} characters`);
    }
    if (text !== "") out.push(text);
  }
  return out;
}

/** A list of e-mail addresses (as parseList reads lists), each checked like an e-mail field. */
export function parseEmailList(value: unknown, form: RecordForm): string[] {
  const items = parseList(value, form);
  for (const item of items) {
    if (!EMAIL.test(item)) throw new ValueProblem("must hold e-mail addresses only");
  }
  return items;
}

/** A list of phone numbers (as parseList reads lists), each at most 50 characters. */
export function parsePhoneList(value: unknown, form: RecordForm): string[] {
  const items = parseList(value, form);
  if (items.some((item) => item.length > 50)) throw new ValueProblem("items must be at most 50 characters");
  return items;
}

/** A list of short words stored in lower case and without repeats (`["spf", "dmarc"]`). */
export function parseLowerList(value: unknown, form: RecordForm): string[] {
  return [...new Set(parseList(value, form).map((item) => item.toLowerCase()))];
}

const DUNS = /^\d{2}-?\d{3}-?\d{4}$/;

/** A D-U-N-S number: 9 digits, dashes allowed (`12-345-6789`); stored as its 9 digits. */
export function parseDuns(value: unknown): string {
  const text = typeof value === "number" && Number.isInteger(value) ? String(value).padStart(9, "0") : value;
  const duns = parseText(text, 2_000, true);
  if (!DUNS.test(duns)) throw new ValueProblem("must be a 9-digit D-U-N-S number, for example 12-345-6789");
  return duns.replace(/-/g, "");
}

/** An object of strings (social profile URLs by network); in CSV a JSON object. */
export function parseStringMap(value: unknown, form: RecordForm): Record<string, string> {
  let parsed: unknown = value;
  if (form === "csv" && typeof value === "string") {
    try {
      parsed = JSON.parse(value);
    } catch {
      parsed = undefined;
    }
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ValueProblem('must be an object of URLs by network, for example {"facebook": "https://..."}');
  }
  const entries = Object.entries(parsed);
  if (entries.length > MAX_LIST_ITEMS) throw new ValueProblem(`must have at most ${MAX_LIST_ITEMS} entries`);
  const out: [string, string][] = [];
  for (const [key, item] of entries) {
    if (typeof item !== "string") throw new ValueProblem("values must be strings");
    const network = key.trim().toLowerCase();
    const url = item.trim();
    if (network.length > 100 || url.length > 2_048)
      throw new ValueProblem("has a key or value that is too long");
    if (network !== "" && url !== "") out.push([network, url]);
  }
  // fromEntries defines own properties, so a key such as "__proto__" stays plain data.
  return Object.fromEntries(out);
}
