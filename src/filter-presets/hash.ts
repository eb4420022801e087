import { errors, type ErrorDetail } from "../http/errors.js";
import type { KeywordList } from "../keyword-lists/repository.js";
import { commaItems, jsonArrayItems } from "./list-forms.js";

/**
 * The dashboard search string of a preset (`filters.hash`, docs/filter-presets.md): URL-query
 * style keys, translated into the body form of the search parameters (parseSearchFilters). This
 * is the one place that knows the keys; a preset's creation and each e-mail schedule send use it.
 */

/** Where a hash's problems are reported. */
export const HASH_PATH = ["body", "filters", "hash"];

/** How a key's value is written: a JSON array, comma-separated, plain text, or keyword list ids. */
type KeyForm = "json" | "comma" | "text" | "lists";

/** The keys the schedule engine reads, the form of their values and the search parameter of each. */
const HASH_KEYS: Readonly<Record<string, { form: KeyForm; member: string }>> = {
  ni: { form: "json", member: "nameIncludeTerms" },
  ne: { form: "json", member: "nameExcludeTerms" },
  ui: { form: "json", member: "urlIncludeTerms" },
  ue: { form: "json", member: "urlExcludeTerms" },
  cli: { form: "json", member: "crawledUrlIncludeTerms" },
  cle: { form: "json", member: "crawledUrlExcludeTerms" },
  di: { form: "json", member: "descriptionIncludeTerms" },
  de: { form: "json", member: "descriptionExcludeTerms" },
  ci: { form: "json", member: "cityInclude" },
  ce: { form: "json", member: "cityExclude" },
  zi: { form: "json", member: "zipInclude" },
  ze: { form: "json", member: "zipExclude" },
  si: { form: "comma", member: "stateInclude" },
  se: { form: "comma", member: "stateExclude" },
  orc: { form: "comma", member: "orColumns" },
  urf: { form: "comma", member: "buyingSignalTypeFilter" },
  rf: { form: "text", member: "redirectFilter" },
  q: { form: "text", member: "search" },
  nkl: { form: "lists", member: "positiveKeywords" },
  ukl: { form: "lists", member: "positiveKeywords" },
  ckl: { form: "lists", member: "positiveKeywords" },
  dkl: { form: "lists", member: "positiveKeywords" },
};

/** The keyword-list keys, as named in messages about the keywords they bring. */
const LIST_KEYS = "nkl/ukl/ckl/dkl";

/** Members whose non-empty value is a positive filter of a hash (a positive list counts too). */
const POSITIVE_MEMBERS = [
  "nameIncludeTerms",
  "urlIncludeTerms",
  "crawledUrlIncludeTerms",
  "descriptionIncludeTerms",
];

/** A keyword list named by a hash: the key it is under and its id. */
export interface HashListRef {
  key: string;
  id: number;
}

/** A hash read into search parameters, before its keyword lists are looked up. */
export interface ParsedHash {
  /** Body-form search parameters of every key except the keyword-list keys. */
  members: Record<string, string | string[]>;
  /** The keyword lists named, each id once, in the order given. */
  lists: HashListRef[];
}

const MAX_ID = 2_147_483_647;

function invalid(details: ErrorDetail[]): never {
  throw errors.validation(
    `Invalid filters.hash: ${details.map((d) => d.message).join("; ")}`,
    details.map((d) => ({ ...d, path: HASH_PATH })),
  );
}

/**
 * Reads a hash (a leading `#` is optional): every key must be one of HASH_KEYS and appear once;
 * JSON-array keys take a JSON array of strings (numbers become text), comma keys comma-separated
 * values (or a JSON array), list keys comma-separated keyword list ids. Empty values are absent.
 * Throws 400 `validation_error` with `details` at `body.filters.hash`, one per problem.
 */
export function parseHash(hash: string): ParsedHash {
  const text = hash.trim().replace(/^#/, "");
  const problems: ErrorDetail[] = [];
  const problem = (key: string, message: string) =>
    problems.push({ path: HASH_PATH, message: `${key}: ${message}` });
  const seen = new Set<string>();
  const members: Record<string, string | string[]> = {};
  const lists: HashListRef[] = [];
  for (const [key, raw] of new URLSearchParams(text)) {
    const spec = HASH_KEYS[key];
    if (!spec) {
      problem(
        key,
        `unknown key; e-mail schedules apply only ${Object.keys(HASH_KEYS).join(", ")} (other dashboard filters are not applied, so remove it)`,
      );
      continue;
    }
    if (seen.has(key)) {
      problem(key, "is given more than once");
      continue;
    }
    seen.add(key);
    const value = raw.trim();
    if (value === "") continue;
    if (spec.form === "text") {
      members[spec.member] = value;
      continue;
    }
    const items = value.startsWith("[") || spec.form === "json" ? jsonArrayItems(value) : commaItems(value);
    if (!items || items.some((item) => typeof item !== "string")) {
      problem(
        key,
        spec.form === "json"
          ? 'must be a JSON array of strings, such as ["*dental*","*dentist*"]'
          : "must be comma-separated values or a JSON array of strings",
      );
      continue;
    }
    const strings = items as string[];
    if (spec.form !== "lists") {
      members[spec.member] = strings;
      continue;
    }
    for (const piece of strings.map((s) => s.trim()).filter((s) => s !== "")) {
      const id = /^\d{1,10}$/.test(piece) ? Number(piece) : NaN;
      if (!(id >= 1 && id <= MAX_ID)) problem(key, `"${piece}" is not a keyword list id`);
      else if (!lists.some((ref) => ref.id === id)) lists.push({ key, id });
    }
  }
  if (problems.length > 0) invalid(problems);
  return { members, lists };
}

/**
 * The body-form search parameters of a parsed hash with its keyword lists: the keywords of the
 * positive lists become `positiveKeywords`, those of the negative ones `negativeKeywords` (lists
 * not given, deleted or another account's, are left out).
 */
export function hashToFilters(parsed: ParsedHash, lists: readonly KeywordList[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...parsed.members };
  const positive: string[] = [];
  const negative: string[] = [];
  for (const ref of parsed.lists) {
    const list = lists.find((l) => l.id === ref.id);
    if (list) (list.type === "positive" ? positive : negative).push(...list.keywords);
  }
  if (positive.length > 0) out.positiveKeywords = positive;
  if (negative.length > 0) out.negativeKeywords = negative;
  return out;
}

/**
 * Whether translated hash filters hold a positive filter: a non-empty `ni`, `ui`, `cli` or `di`,
 * or a positive keyword list with keywords.
 */
export function hashHasPositiveFilter(filters: Record<string, unknown>): boolean {
  return ["positiveKeywords", ...POSITIVE_MEMBERS].some((member) => {
    const value = filters[member];
    return Array.isArray(value) && value.some((t) => typeof t === "string" && t.trim() !== "");
  });
}

/** 400: the hash has no positive filter. */
export function noPositiveFilter(): never {
  return invalid([
    {
      path: HASH_PATH,
      message:
        "no positive filter: send a non-empty ni, ui, cli or di, or the id of one of your positive keyword lists in nkl, ukl, ckl or dkl",
    },
  ]);
}

/** 400: keyword list ids of the hash that are not the account's lists. */
export function foreignLists(refs: readonly HashListRef[]): never {
  return invalid(
    refs.map((ref) => ({
      path: HASH_PATH,
      message: `${ref.key}: keyword list ${ref.id} is not one of your keyword lists`,
    })),
  );
}

/**
 * The problems of the translated search parameters (parseSearchFilters with `path` HASH_PATH)
 * named by the hash key they come from, at `body.filters.hash`.
 */
export function asHashDetails(details: readonly ErrorDetail[]): ErrorDetail[] {
  return details.map((detail) => {
    const member = detail.path[HASH_PATH.length] ?? "";
    const key =
      member === "positiveKeywords" || member === "negativeKeywords"
        ? LIST_KEYS
        : (Object.entries(HASH_KEYS).find(([, spec]) => spec.member === member)?.[0] ?? member);
    return { path: HASH_PATH, message: `${key}: ${detail.message}` };
  });
}
