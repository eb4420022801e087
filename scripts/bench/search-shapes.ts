import { STATES } from "../../src/leads/import/generate-data.js";

/**
 * Searches the way the real service's clients write them (REFERENCE.md section 2, as `smb_api.py`
 * encodes them): wildcard keywords as a JSON-array string over the default columns, each with one
 * more part a client adds: a buying-signal date, a contact filter, another sort, or a keyword with
 * an inner wildcard. docs/compatibility.md lists the forms.
 */

/** Trade stems a client wraps in wildcards (`*dental*`). */
const STEMS = [
  "plumb",
  "roof",
  "hvac",
  "landscap",
  "dental",
  "bakery",
  "salon",
  "electric",
  "paint",
  "pest",
  "clean",
  "chiropract",
  "fitness",
  "insurance",
  "realty",
  "coffee",
  "pizza",
  "florist",
  "construct",
  "remodel",
  "pool",
  "locksmith",
  "solar",
  "groom",
  "tutor",
  "spa",
  "tattoo",
  "marketing",
  "towing",
];

/** Keywords with an inner wildcard (`*auto*repair*`): two words in order within one column value. */
const INNER = [
  ["auto", "repair"],
  ["pool", "clean"],
  ["tree", "service"],
  ["home", "remodel"],
  ["pet", "groom"],
  ["car", "wash"],
  ["hair", "salon"],
  ["law", "firm"],
];

/** The part each shape adds to the keywords. */
const EXTRAS: readonly (Record<string, string> | "inner")[] = [
  { lastBuyingSignalFrom: "rel:30d" },
  { emailPrimaryEmptyFilter: "exclude_empty" },
  { sortBy: "wCompanyName", sortOrder: "asc" },
  "inner",
];

/** How many client shapes there are (one per extra part); `clientShapeQueries` takes them in turn. */
export const CLIENT_SHAPE_COUNT = EXTRAS.length;

/** A small seeded PRNG (mulberry32). */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * `count` query strings of the client shapes, in turn: two or three wildcard keywords as a
 * JSON-array string, a state (narrow) or none (broad), and one of EXTRAS; limit 50 and
 * `maxCredits` 50, which `smb_api.py` requires on every `GET /leads` (new leads then come first).
 */
export function clientShapeQueries(count: number, seed: number, withState: boolean): string[] {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const queries: string[] = [];
  for (let i = 0; queries.length < count; i += 1) {
    const extra = EXTRAS[i % EXTRAS.length]!;
    const keywords =
      extra === "inner"
        ? [`*${pick(INNER).join("*")}*`, `*${pick(INNER).join("*")}*`]
        : [`*${pick(STEMS)}*`, `*${pick(STEMS)}*`];
    if (keywords[0] === keywords[1]) continue;
    const params = new URLSearchParams({
      positiveKeywords: JSON.stringify(keywords),
      ...(withState ? { stateInclude: pick(STATES).code } : {}),
      ...(extra === "inner" ? {} : extra),
      limit: "50",
      maxCredits: "50",
    });
    queries.push(params.toString());
  }
  return queries;
}

/** The name of a client-shape query's extra part, for the per-shape figures. */
export function clientShapeName(query: string): string {
  const params = new URLSearchParams(query);
  if (params.has("lastBuyingSignalFrom")) return "date";
  if (params.has("emailPrimaryEmptyFilter")) return "contact";
  if (params.has("sortBy")) return "sort";
  return "innerWildcard";
}
