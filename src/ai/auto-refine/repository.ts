import { randomUUID } from "node:crypto";
import { sql, type Selectable } from "kysely";
import type { DbOrTrx, Trx } from "../../db/database.js";
import type { KeywordListsTable, StoredRefinementScore } from "../../db/schema/leads.js";
import type { RefinementStatus } from "../../keyword-lists/repository.js";

/** The refinement state of one keyword list (domain shape, not a row). */
export interface RefinableList {
  id: number;
  accountId: number;
  name: string;
  type: "positive" | "negative";
  keywords: string[];
  sourceCategories: string[] | null;
  createdAt: Date;
  autoRefineEnabled: boolean;
  refinementStatus: RefinementStatus | null;
  scoresPerRound: StoredRefinementScore[];
  pairedListId: number | null;
  currentRound: number;
  maxRounds: number;
  lastRefinedAt: Date | null;
}

/** One refinement run (a list and its pair). */
export interface RefinementRun {
  id: string;
  accountId: number;
  listId: number;
  pairedListId: number | null;
  status: RefinementStatus;
}

function toList(row: Selectable<KeywordListsTable>): RefinableList {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    type: row.type,
    keywords: row.keywords,
    sourceCategories: row.source_categories,
    createdAt: row.created_at,
    autoRefineEnabled: row.auto_refine_enabled,
    refinementStatus: row.refinement_status,
    scoresPerRound: row.scores_per_round,
    pairedListId: row.paired_list_id,
    currentRound: row.current_round,
    maxRounds: row.max_rounds,
    lastRefinedAt: row.last_refined_at,
  };
}

/** A running refinement whose heartbeat is older than this is taken for dead (docs/ai.md). */
export const STALE_AFTER_MS = 15 * 60_000;

/** The account's lists (newest first), or only `listId` of them; `lock` takes row locks. */
export async function findRefinableLists(
  db: DbOrTrx,
  accountId: number,
  ids?: readonly number[],
  lock = false,
): Promise<RefinableList[]> {
  if (ids && ids.length === 0) return [];
  let query = db
    .selectFrom("keyword_lists")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc");
  if (ids) query = query.where("id", "in", [...ids]);
  if (lock) query = query.forUpdate();
  return (await query.execute()).map(toList);
}

/** Sets the refinement fields of the account's lists `ids`. */
export async function setListsRefinement(
  db: DbOrTrx,
  accountId: number,
  ids: readonly number[],
  changes: {
    autoRefineEnabled?: boolean;
    refinementStatus?: RefinementStatus | null;
    scoresPerRound?: StoredRefinementScore[];
    currentRound?: number;
    maxRounds?: number;
  },
): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable("keyword_lists")
    .set({
      ...(changes.autoRefineEnabled !== undefined && { auto_refine_enabled: changes.autoRefineEnabled }),
      ...(changes.refinementStatus !== undefined && { refinement_status: changes.refinementStatus }),
      ...(changes.scoresPerRound !== undefined && {
        scores_per_round: JSON.stringify(changes.scoresPerRound),
      }),
      ...(changes.currentRound !== undefined && { current_round: changes.currentRound }),
      ...(changes.maxRounds !== undefined && { max_rounds: changes.maxRounds }),
    })
    .where("account_id", "=", accountId)
    .where("id", "in", [...ids])
    .execute();
}

/**
 * Takes the deployment-wide lock of refinement starts (held to the end of `trx`), marks running
 * refinements without a heartbeat for STALE_AFTER_MS failed (their lists too), and counts the
 * ones still running.
 */
export async function lockAndCountRunning(trx: Trx): Promise<number> {
  await sql`select pg_advisory_xact_lock(hashtextextended('ai:auto-refine', 0))`.execute(trx);
  const stale = await trx
    .updateTable("ai_refinements")
    .set({ status: "failed", error: "The refinement stopped answering.", finished_at: new Date() })
    .where("status", "=", "running")
    .where("heartbeat_at", "<", new Date(Date.now() - STALE_AFTER_MS))
    .returning(["account_id", "list_id", "paired_list_id"])
    .execute();
  for (const run of stale) {
    await trx
      .updateTable("keyword_lists")
      .set({ refinement_status: "failed", auto_refine_enabled: false })
      .where("account_id", "=", run.account_id)
      .where("id", "in", [run.list_id, run.paired_list_id ?? run.list_id])
      .where("refinement_status", "=", "running")
      .execute();
  }
  const row = await trx
    .selectFrom("ai_refinements")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("status", "=", "running")
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The running refinement of any of `listIds`, if one runs. */
export async function findRunningRefinement(
  db: DbOrTrx,
  listIds: readonly number[],
): Promise<RefinementRun | undefined> {
  const row = await db
    .selectFrom("ai_refinements")
    .selectAll()
    .where("status", "=", "running")
    .where((eb) => eb.or([eb("list_id", "in", [...listIds]), eb("paired_list_id", "in", [...listIds])]))
    .executeTakeFirst();
  return row && toRun(row);
}

function toRun(row: {
  id: string;
  account_id: number;
  list_id: number;
  paired_list_id: number | null;
  status: RefinementStatus;
}): RefinementRun {
  return {
    id: row.id,
    accountId: row.account_id,
    listId: row.list_id,
    pairedListId: row.paired_list_id,
    status: row.status,
  };
}

/** A new running refinement of a list and its pair. */
export async function insertRefinement(
  trx: Trx,
  accountId: number,
  listId: number,
  pairedListId: number | null,
): Promise<RefinementRun> {
  const row = await trx
    .insertInto("ai_refinements")
    .values({
      id: randomUUID(),
      account_id: accountId,
      list_id: listId,
      paired_list_id: pairedListId,
      status: "running",
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toRun(row);
}

/** The refinement (any status), or undefined. */
export async function findRefinement(
  db: DbOrTrx,
  id: string,
  lock = false,
): Promise<RefinementRun | undefined> {
  let query = db.selectFrom("ai_refinements").selectAll().where("id", "=", id);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row && toRun(row);
}

/** Moves a running refinement's heartbeat; false when it is no longer running (disabled, failed). */
export async function beat(db: DbOrTrx, id: string): Promise<boolean> {
  const result = await db
    .updateTable("ai_refinements")
    .set({ heartbeat_at: new Date() })
    .where("id", "=", id)
    .where("status", "=", "running")
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Ends a refinement (only while it is running): paused, completed or failed. */
export async function endRefinement(
  db: DbOrTrx,
  id: string,
  status: Exclude<RefinementStatus, "running">,
  error: string | null = null,
): Promise<boolean> {
  const result = await db
    .updateTable("ai_refinements")
    .set({ status, error, finished_at: new Date() })
    .where("id", "=", id)
    .where("status", "=", "running")
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Writes one round's result to a list: its keywords (when given) and its scores. */
export async function writeRound(
  trx: Trx,
  accountId: number,
  listId: number,
  round: { keywords: string[] | null; scoresPerRound: StoredRefinementScore[]; currentRound: number },
): Promise<void> {
  await trx
    .updateTable("keyword_lists")
    .set({
      ...(round.keywords && { keywords: round.keywords }),
      scores_per_round: JSON.stringify(round.scoresPerRound),
      current_round: round.currentRound,
      last_refined_at: new Date(),
      updated_at: new Date(),
    })
    .where("account_id", "=", accountId)
    .where("id", "=", listId)
    .execute();
}
