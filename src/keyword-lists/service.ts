import type { DbOrTrx, Trx } from "../db/database.js";
import { errors, type ErrorDetail } from "../http/errors.js";
import {
  deleteKeywordList,
  insertKeywordList,
  listKeywordLists,
  replaceKeywordList,
  replaceAllKeywordLists,
  type KeywordList,
  type KeywordListContent,
  type KeywordListType,
} from "./repository.js";

/** Longest list name, after trimming. */
export const NAME_MAX_LENGTH = 255;

/** A keyword list as sent (schema-checked); other members are ignored. */
export interface KeywordListInput {
  name: string;
  type: KeywordListType;
  keywords: string[];
  sourceCategories?: string[] | null;
}

/**
 * Trimmed, non-empty strings without repeats (compared ignoring case, as matching does), in the
 * order sent.
 */
export function cleanTerms(values: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const value of values) {
    const term = value.trim();
    const key = term.toLowerCase();
    if (term.length === 0 || seen.has(key)) continue;
    seen.add(key);
    out.push(term);
  }
  return out;
}

/**
 * Checks and cleans a list as sent: the name is trimmed (then 1-255 characters), keywords and
 * source categories are trimmed with empty and repeated items dropped; at least one keyword must
 * remain. Throws 400 `validation_error` with one detail per problem.
 */
export function toKeywordListContent(input: KeywordListInput): KeywordListContent {
  const problems: ErrorDetail[] = [];
  const name = input.name.trim();
  if (name.length < 1 || name.length > NAME_MAX_LENGTH) {
    problems.push({
      path: ["body", "name"],
      message: `must be 1-${NAME_MAX_LENGTH} characters after trimming`,
    });
  }
  const keywords = cleanTerms(input.keywords);
  if (keywords.length === 0) {
    problems.push({ path: ["body", "keywords"], message: "must hold at least one non-empty keyword" });
  }
  if (problems.length > 0) {
    throw errors.validation(
      `Invalid keyword list: ${problems.map((p) => `${p.path.join(".")} ${p.message}`).join("; ")}`,
      problems,
    );
  }
  return {
    name,
    type: input.type,
    keywords,
    sourceCategories: input.sourceCategories == null ? null : cleanTerms(input.sourceCategories),
  };
}

/** The account's keyword lists, newest first. */
export function listLists(db: DbOrTrx, accountId: number): Promise<KeywordList[]> {
  return listKeywordLists(db, accountId);
}

/** Creates a keyword list after checking it. */
export function createList(db: DbOrTrx, accountId: number, input: KeywordListInput): Promise<KeywordList> {
  return insertKeywordList(db, accountId, toKeywordListContent(input));
}

/** Replaces one of the account's lists (every field from the input); 404 when it has no such list. */
export async function replaceList(
  db: DbOrTrx,
  accountId: number,
  id: number,
  input: KeywordListInput,
): Promise<KeywordList> {
  const content = toKeywordListContent(input);
  const list = await replaceKeywordList(db, accountId, id, content);
  if (!list) throw errors.notFound("Keyword list not found.");
  return list;
}

/** Deletes one of the account's lists; 404 when it has no such list. */
export async function deleteList(db: DbOrTrx, accountId: number, id: number): Promise<void> {
  if (!(await deleteKeywordList(db, accountId, id))) throw errors.notFound("Keyword list not found.");
}

/**
 * Replaces all of the account's lists by `inputs` in the caller's transaction (keyword generation
 * replaces an account's lists in one step), each checked and cleaned as on create.
 */
export function replaceAllLists(
  trx: Trx,
  accountId: number,
  inputs: readonly KeywordListInput[],
): Promise<KeywordList[]> {
  return replaceAllKeywordLists(trx, accountId, inputs.map(toKeywordListContent));
}
