import type { Db, DbOrTrx, Trx } from "../db/database.js";
import { errors, type ErrorDetail } from "../http/errors.js";
import {
  deleteKeywordList,
  findKeywordList,
  findKeywordListsByIds,
  insertKeywordList,
  listKeywordLists,
  replaceAllKeywordLists,
  setListPair,
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
  /** Another of the account's lists, of the other type, to pair with (null: none). */
  pairedListId?: number | null;
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
  pairedListId?: number | null;
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

/**
 * Checks that `partnerId` is another of the account's lists, of the other type than `type` (400
 * `validation_error` at `body.pairedListId` otherwise), reading it locked for the pairing.
 */
async function checkPartner(
  trx: Trx,
  accountId: number,
  partnerId: number,
  own: { id: number | null; type: KeywordListType },
): Promise<void> {
  const partner = await findKeywordList(trx, accountId, partnerId);
  const problem = !partner
    ? "is not one of the account's keyword lists"
    : partner.id === own.id
      ? "must name another list"
      : partner.type === own.type
        ? `must name a list of the other type (${own.type === "positive" ? "negative" : "positive"})`
        : null;
  if (problem) {
    throw errors.validation(`Invalid keyword list: body.pairedListId ${problem}`, [
      { path: ["body", "pairedListId"], message: problem },
    ]);
  }
}

/**
 * Creates a keyword list after checking it; with `pairedListId`, pairs it with that list in the
 * same transaction.
 */
export async function createList(db: Db, accountId: number, input: KeywordListInput): Promise<KeywordList> {
  const content = toKeywordListContent(input);
  const partnerId = input.pairedListId ?? null;
  if (partnerId === null) return insertKeywordList(db, accountId, content);
  return db.transaction().execute(async (trx) => {
    await checkPartner(trx, accountId, partnerId, { id: null, type: content.type });
    const list = await insertKeywordList(trx, accountId, content);
    await setListPair(trx, accountId, list.id, partnerId);
    return (await findKeywordList(trx, accountId, list.id))!;
  });
}

/**
 * `PUT /keyword-lists/{id}`: a body with `name`, `type` and `keywords` replaces the list (an
 * absent `sourceCategories` becomes null, as before); any other body sets only the fields sent.
 * 400 `validation_error` when none of the four fields is sent; 404 when the account has no such
 * list.
 */
export async function updateList(
  db: Db,
  accountId: number,
  id: number,
  input: KeywordListUpdate,
): Promise<KeywordList> {
  const sent = (["name", "type", "keywords", "sourceCategories", "pairedListId"] as const).filter(
    (key) => input[key] !== undefined,
  );
  if (sent.length === 0) {
    throw errors.validation("Send at least one of name, type, keywords, sourceCategories, pairedListId.", [
      {
        path: ["body"],
        message: "must have at least one of name, type, keywords, sourceCategories, pairedListId",
      },
    ]);
  }
  const changes = cleanFields(input);
  const fullReplacement =
    input.name !== undefined && input.type !== undefined && input.keywords !== undefined;
  if (fullReplacement && input.sourceCategories === undefined) changes.sourceCategories = null;
  const pairing = input.pairedListId;
  const run = async (trx: DbOrTrx): Promise<KeywordList> => {
    const list = await updateKeywordList(trx, accountId, id, changes);
    if (!list) throw errors.notFound("Keyword list not found.");
    if (pairing === undefined) {
      // A changed type breaks a pair of two lists of one type.
      if (list.refinement.pairedListId === null || changes.type === undefined) return list;
      const partner = await findKeywordList(trx, accountId, list.refinement.pairedListId);
      if (!partner || partner.type !== list.type) return list;
      await setListPair(trx, accountId, id, null);
    } else {
      if (pairing !== null) await checkPartner(trx as Trx, accountId, pairing, list);
      await setListPair(trx, accountId, id, pairing);
    }
    return (await findKeywordList(trx, accountId, id))!;
  };
  if (pairing === undefined && changes.type === undefined) return run(db);
  if (!("transaction" in db)) return run(db);
  return db.transaction().execute(run);
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
