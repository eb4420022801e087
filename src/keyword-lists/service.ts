import type { DbOrTrx, Trx } from "../db/database.js";
import { errors, type ErrorDetail } from "../http/errors.js";
import {
  deleteKeywordList,
  findKeywordListsByIds,
  insertKeywordList,
  listKeywordLists,
  replaceAllKeywordLists,
  updateKeywordList,
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

/** Changes to a list as sent (schema-checked): any of the four fields; other members are ignored. */
export interface KeywordListUpdate {
  name?: string;
  type?: KeywordListType;
  keywords?: string[];
  sourceCategories?: string[] | null;
}

/**
 * Checks and cleans the fields sent: the name is trimmed (then 1-255 characters), keywords and
 * source categories are trimmed with empty and repeated items dropped; keywords, when sent, must
 * keep at least one item. Throws 400 `validation_error` with one detail per problem.
 */
function cleanFields(input: KeywordListUpdate): Partial<KeywordListContent> {
  const problems: ErrorDetail[] = [];
  const out: Partial<KeywordListContent> = {};
  if (input.name !== undefined) {
    out.name = input.name.trim();
    if (out.name.length < 1 || out.name.length > NAME_MAX_LENGTH) {
      problems.push({
        path: ["body", "name"],
        message: `must be 1-${NAME_MAX_LENGTH} characters after trimming`,
      });
    }
  }
  if (input.type !== undefined) out.type = input.type;
  if (input.keywords !== undefined) {
    out.keywords = cleanTerms(input.keywords);
    if (out.keywords.length === 0) {
      problems.push({ path: ["body", "keywords"], message: "must hold at least one non-empty keyword" });
    }
  }
  if (input.sourceCategories !== undefined) {
    out.sourceCategories = input.sourceCategories === null ? null : cleanTerms(input.sourceCategories);
  }
  if (problems.length > 0) {
    throw errors.validation(
      `Invalid keyword list: ${problems.map((p) => `${p.path.join(".")} ${p.message}`).join("; ")}`,
      problems,
    );
  }
  return out;
}

/**
 * Checks and cleans a whole list as sent (create, keyword generation): every field as in
 * cleanFields; an absent `sourceCategories` is null.
 */
export function toKeywordListContent(input: KeywordListInput): KeywordListContent {
  const fields = cleanFields(input);
  return {
    name: fields.name ?? "",
    type: input.type,
    keywords: fields.keywords ?? [],
    sourceCategories: fields.sourceCategories ?? null,
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

/**
 * `PUT /keyword-lists/{id}`: a body with `name`, `type` and `keywords` replaces the list (an
 * absent `sourceCategories` becomes null, as before); any other body sets only the fields sent.
 * 400 `validation_error` when none of the four fields is sent; 404 when the account has no such
 * list.
 */
export async function updateList(
  db: DbOrTrx,
  accountId: number,
  id: number,
  input: KeywordListUpdate,
): Promise<KeywordList> {
  const sent = (["name", "type", "keywords", "sourceCategories"] as const).filter(
    (key) => input[key] !== undefined,
  );
  if (sent.length === 0) {
    throw errors.validation("Send at least one of name, type, keywords, sourceCategories.", [
      { path: ["body"], message: "must have at least one of name, type, keywords, sourceCategories" },
    ]);
  }
  const changes = cleanFields(input);
  const fullReplacement =
    input.name !== undefined && input.type !== undefined && input.keywords !== undefined;
  if (fullReplacement && input.sourceCategories === undefined) changes.sourceCategories = null;
  const list = await updateKeywordList(db, accountId, id, changes);
  if (!list) throw errors.notFound("Keyword list not found.");
  return list;
}

/** The account's lists among `ids`; ids of lists it does not have are left out. */
export function findListsByIds(
  db: DbOrTrx,
  accountId: number,
  ids: readonly number[],
): Promise<KeywordList[]> {
  return findKeywordListsByIds(db, accountId, ids);
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
