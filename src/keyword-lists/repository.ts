import { sql, type Selectable } from "kysely";
import type { DbOrTrx, Trx } from "../db/database.js";
import type { KeywordListsTable, StoredRefinementScore } from "../db/schema/leads.js";

/** Whether a list holds words to find or words to exclude. */
export type KeywordListType = "positive" | "negative";

/** Where a list's keyword auto-refine stands (null: none started). */
export type RefinementStatus = "running" | "paused" | "completed" | "failed";

/** A list's auto-refine state (src/ai/auto-refine writes it). */
export interface KeywordListRefinement {
  autoRefineEnabled: boolean;
  refinementStatus: RefinementStatus | null;
  scoresPerRound: StoredRefinementScore[];
  pairedListId: number | null;
  currentRound: number;
  maxRounds: number;
  lastRefinedAt: Date | null;
}

/** A keyword list as the service sees it (domain shape, not a row). */
export interface KeywordList {
  id: number;
  accountId: number;
  name: string;
  type: KeywordListType;
  keywords: string[];
  sourceCategories: string[] | null;
  createdAt: Date;
  refinement: KeywordListRefinement;
}

/** The writable content of a keyword list, already cleaned by the service. */
export interface KeywordListContent {
  name: string;
  type: KeywordListType;
  keywords: string[];
  sourceCategories: string[] | null;
}

function toKeywordList(row: Selectable<KeywordListsTable>): KeywordList {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    type: row.type,
    keywords: row.keywords,
    sourceCategories: row.source_categories,
    createdAt: row.created_at,
    refinement: {
      autoRefineEnabled: row.auto_refine_enabled,
      refinementStatus: row.refinement_status,
      scoresPerRound: row.scores_per_round,
      pairedListId: row.paired_list_id,
      currentRound: row.current_round,
      maxRounds: row.max_rounds,
      lastRefinedAt: row.last_refined_at,
    },
  };
}

/**
 * Pairs two of the account's lists (each names the other; lists either was paired with before
 * lose their pair), or, with `partnerId` null, removes the list's pair (on both sides).
 */
export async function setListPair(
  db: DbOrTrx,
  accountId: number,
  listId: number,
  partnerId: number | null,
): Promise<void> {
  const ids = partnerId === null ? [listId] : [listId, partnerId];
  await db
    .updateTable("keyword_lists")
    .set({ paired_list_id: null })
    .where("account_id", "=", accountId)
    .where((eb) => eb.or([eb("paired_list_id", "in", ids), eb("id", "in", ids)]))
    .execute();
  if (partnerId === null) return;
  await db
    .updateTable("keyword_lists")
    .set({
      paired_list_id: sql<number>`case when id = ${listId}::int then ${partnerId}::int else ${listId}::int end`,
    })
    .where("account_id", "=", accountId)
    .where("id", "in", ids)
    .execute();
}

/** One of the account's lists, or undefined. */
export async function findKeywordList(
  db: DbOrTrx,
  accountId: number,
  id: number,
): Promise<KeywordList | undefined> {
  const row = await db
    .selectFrom("keyword_lists")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row && toKeywordList(row);
}

/** The account's keyword lists, newest first. */
export async function listKeywordLists(db: DbOrTrx, accountId: number): Promise<KeywordList[]> {
  const rows = await db
    .selectFrom("keyword_lists")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .execute();
  return rows.map(toKeywordList);
}

/** The account's lists among `ids` (ids of other accounts' lists, or of none, are left out). */
export async function findKeywordListsByIds(
  db: DbOrTrx,
  accountId: number,
  ids: readonly number[],
): Promise<KeywordList[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom("keyword_lists")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "in", [...ids])
    .execute();
  return rows.map(toKeywordList);
}

/** Stores a new keyword list of the account. */
export async function insertKeywordList(
  db: DbOrTrx,
  accountId: number,
  content: KeywordListContent,
): Promise<KeywordList> {
  const row = await db
    .insertInto("keyword_lists")
    .values({
      account_id: accountId,
      name: content.name,
      type: content.type,
      keywords: content.keywords,
      source_categories: content.sourceCategories,
      updated_at: new Date(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toKeywordList(row);
}

/**
 * Sets the given fields of one of the account's lists (the others are kept), in one statement;
 * undefined when the account has no such list.
 */
export async function updateKeywordList(
  db: DbOrTrx,
  accountId: number,
  id: number,
  changes: Partial<KeywordListContent>,
): Promise<KeywordList | undefined> {
  const row = await db
    .updateTable("keyword_lists")
    .set({
      ...(changes.name !== undefined && { name: changes.name }),
      ...(changes.type !== undefined && { type: changes.type }),
      ...(changes.keywords !== undefined && { keywords: changes.keywords }),
      ...(changes.sourceCategories !== undefined && { source_categories: changes.sourceCategories }),
      updated_at: new Date(),
    })
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
  return row && toKeywordList(row);
}

/** Deletes one of the account's lists; false when the account has no such list. */
export async function deleteKeywordList(db: DbOrTrx, accountId: number, id: number): Promise<boolean> {
  const result = await db
    .deleteFrom("keyword_lists")
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Replaces all of the account's lists by `contents` (in this order; the caller's transaction makes
 * it one step: readers see the old lists or the new ones, never a mix).
 */
export async function replaceAllKeywordLists(
  trx: Trx,
  accountId: number,
  contents: readonly KeywordListContent[],
): Promise<KeywordList[]> {
  await trx.deleteFrom("keyword_lists").where("account_id", "=", accountId).execute();
  if (contents.length === 0) return [];
  const now = new Date();
  const rows = await trx
    .insertInto("keyword_lists")
    .values(
      contents.map((content) => ({
        account_id: accountId,
        name: content.name,
        type: content.type,
        keywords: content.keywords,
        source_categories: content.sourceCategories,
        updated_at: now,
      })),
    )
    .returningAll()
    .execute();
  return rows.sort((a, b) => a.id - b.id).map(toKeywordList);
}
