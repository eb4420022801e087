import { sql } from "kysely";
import type { DbOrTrx } from "../db/database.js";
import { cleanTerms, NAME_MAX_LENGTH } from "../keyword-lists/service.js";
import type { KeywordRequest } from "./inputs.js";
import type { ProposedKeywordLists } from "./output-shapes.js";

/** A keyword list the engine produced, ready to be saved. */
export interface GeneratedList {
  name: string;
  type: "positive" | "negative";
  keywords: string[];
  sourceCategories: string[];
}

/** Bounds of what is saved, whatever a model proposes. */
const MAX_LISTS = 25;
const MAX_KEYWORDS = 25;
const KEYWORD_MIN_LENGTH = 2;
const KEYWORD_MAX_LENGTH = 100;
/** A word stem is a keyword of its own from this length (shorter ones match too much). */
const STEM_MIN_LENGTH = 4;
/** Control characters, kept out of saved keywords and names. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f]/g;

/**
 * Words that mark listings, job boards and directories rather than businesses: the built-in
 * negative list (docs/ai.md).
 */
export const DEFAULT_NEGATIVE_KEYWORDS = ["directory", "careers", "jobs"];

/**
 * The built-in back end's lists: per target category a positive list with the category's name
 * and, for a one-word name, its stem ("plumb" for "Plumbing", so "Plumber" and "plumbingpros.com"
 * match too: search terms match anywhere in a column); one negative list with the default
 * negative words. Target locations are not keywords (a city in a keyword would match businesses
 * of any category named after it).
 */
export async function builtInKeywordLists(db: DbOrTrx, request: KeywordRequest): Promise<GeneratedList[]> {
  const categories = cleanTerms(request.targetCategories).slice(0, MAX_LISTS - 1);
  const singleWords = categories.map((c) => c.toLowerCase()).filter((c) => /^[a-z]+$/.test(c));
  const stems = await stemPrefixes(db, singleWords);
  const lists: GeneratedList[] = categories.map((category) => {
    const name = category.toLowerCase();
    const stem = stems.get(name);
    return {
      name: listName(category),
      type: "positive",
      keywords: cleanTerms(stem && stem !== name ? [name, stem] : [name]),
      sourceCategories: [category],
    };
  });
  lists.push({
    name: "Excluded listings",
    type: "negative",
    keywords: [...DEFAULT_NEGATIVE_KEYWORDS],
    sourceCategories: categories,
  });
  return lists;
}

/**
 * The part of each word its English stem keeps (the longest common prefix of the word and its
 * Porter stem: "plumbing" -> "plumb", "dentistry" -> "dentistr"), when at least 4 letters long.
 */
async function stemPrefixes(db: DbOrTrx, words: readonly string[]): Promise<Map<string, string>> {
  const prefixes = new Map<string, string>();
  if (words.length === 0) return prefixes;
  const result = await sql<{ word: string; stem: string | null }>`
    select w as word, (tsvector_to_array(to_tsvector('english', w)))[1] as stem
    from unnest(${words}::text[]) as w`.execute(db);
  for (const { word, stem } of result.rows) {
    if (!stem) continue;
    let length = 0;
    while (length < word.length && length < stem.length && word[length] === stem[length]) length += 1;
    if (length >= STEM_MIN_LENGTH) prefixes.set(word, word.slice(0, length));
  }
  return prefixes;
}

function listName(category: string): string {
  return `${category} keywords`.slice(0, NAME_MAX_LENGTH).trim();
}

/**
 * A model's lists made safe to save: keywords trimmed, lower-cased, 2-100 characters, without
 * repeats or control characters, at most 25 per list; empty lists dropped; `sourceCategories`
 * kept to the target categories (a list naming none of them is given every one). Each target
 * category ends up with a positive list holding its own name, so its keywords find the leads
 * classified in it whatever the model wrote.
 */
export function cleanKeywordLists(
  proposed: ProposedKeywordLists["lists"],
  targetCategories: readonly string[],
): GeneratedList[] {
  const targets = cleanTerms(targetCategories);
  const targetByKey = new Map(targets.map((t) => [t.toLowerCase(), t]));
  const lists: GeneratedList[] = [];
  for (const list of proposed) {
    const keywords = cleanTerms(
      list.keywords
        .map((k) => k.trim().toLowerCase())
        .filter((k) => k.length >= KEYWORD_MIN_LENGTH && k.length <= KEYWORD_MAX_LENGTH && !CONTROL.test(k)),
    ).slice(0, MAX_KEYWORDS);
    if (keywords.length === 0) continue;
    const sources = cleanTerms(
      list.sourceCategories.flatMap((c) => {
        const known = targetByKey.get(c.trim().toLowerCase());
        return known ? [known] : [];
      }),
    );
    const name = list.name.replace(CONTROLS, " ").trim().slice(0, NAME_MAX_LENGTH).trim();
    lists.push({
      name: name || (list.type === "positive" ? "Keywords" : "Excluded keywords"),
      type: list.type,
      keywords,
      sourceCategories: sources.length > 0 ? sources : targets,
    });
    if (lists.length >= MAX_LISTS - targets.length) break;
  }
  for (const category of targets) {
    const own = category.toLowerCase();
    const positive = lists.filter(
      (l) => l.type === "positive" && l.sourceCategories.some((s) => s.toLowerCase() === own),
    );
    if (positive.some((l) => l.keywords.includes(own))) continue;
    const first = positive[0];
    if (first) first.keywords = cleanTerms([own, ...first.keywords]).slice(0, MAX_KEYWORDS);
    else
      lists.push({
        name: listName(category),
        type: "positive",
        keywords: [own],
        sourceCategories: [category],
      });
  }
  return lists;
}
