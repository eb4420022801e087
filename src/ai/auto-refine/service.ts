import { sql } from "kysely";
import type { Db, DbOrTrx } from "../../db/database.js";
import { errors } from "../../http/errors.js";
import {
  endRefinement,
  findRefinableLists,
  findRunningRefinement,
  insertRefinement,
  lockAndCountRunning,
  setListsRefinement,
  type RefinableList,
} from "./repository.js";
import { AUTO_REFINE_TASK, MAX_ROUNDS, sortPair, sourceCategoriesOf } from "./run.js";

/** Refinements running at once in the whole deployment, at most. */
export const MAX_RUNNING_REFINEMENTS = 3;
/** Attempts of the task (a crash or a database error). */
const MAX_ATTEMPTS = 3;

/** What an enable or disable did: the list and its pair as they stand after it. */
export interface AutoRefineChange {
  message: string;
  running: boolean;
  lists: RefinableList[];
}

function notTheAccounts(path: "body" | "query"): never {
  throw errors.validation(`${path}.listId is not one of the account's keyword lists.`, [
    { path: [path, "listId"], message: "is not one of the account's keyword lists" },
  ]);
}

/** The account's lists `ids`, in this order. */
async function inOrder(db: DbOrTrx, accountId: number, ids: readonly number[]): Promise<RefinableList[]> {
  const lists = await findRefinableLists(db, accountId, ids);
  return ids.flatMap((id) => lists.filter((l) => l.id === id));
}

/** The list and its pair (when the pair is the account's), locked unless `lock` is false; 400 when the list is not the account's. */
async function listAndPair(
  db: DbOrTrx,
  accountId: number,
  listId: number,
  lock = true,
): Promise<RefinableList[]> {
  const [list] = await findRefinableLists(db, accountId, [listId], lock);
  if (!list) notTheAccounts("body");
  if (list.pairedListId === null) return [list];
  const [pair] = await findRefinableLists(db, accountId, [list.pairedListId], lock);
  return pair ? [list, pair] : [list];
}

/**
 * `POST /ai/auto-refine/enable`: turns auto-refine on for the list and its pair, clears their score
 * history and starts a refinement when fewer than 3 run in the deployment (counted under an
 * advisory lock, with the job added in the same transaction); otherwise nothing is queued and
 * `refinementStatus` stays null. A list whose refinement runs is left as it is.
 */
export async function enableAutoRefine(db: Db, accountId: number, listId: number): Promise<AutoRefineChange> {
  return db.transaction().execute(async (trx) => {
    // The start lock first, the lists' row locks after: every transaction that touches a
    // refinement and its lists takes its locks in this order (no deadlock with a stale cleanup).
    const running = await lockAndCountRunning(trx);
    const lists = await listAndPair(trx, accountId, listId);
    const ids = lists.map((l) => l.id);
    if (sourceCategoriesOf(sortPair(lists)).length === 0) {
      throw errors.validation(
        "The list and its pair have no sourceCategories: set them with PUT /keyword-lists/{id}.",
        [{ path: ["body", "listId"], message: "the list (or its pair) needs sourceCategories" }],
      );
    }
    if (await findRunningRefinement(trx, ids)) {
      return {
        message: "A refinement of this list is already running; follow it with GET /ai/auto-refine/status.",
        running: true,
        lists,
      };
    }
    const canRun = running < MAX_RUNNING_REFINEMENTS;
    await setListsRefinement(trx, accountId, ids, {
      autoRefineEnabled: true,
      refinementStatus: canRun ? "running" : null,
      scoresPerRound: [],
      currentRound: 0,
      maxRounds: MAX_ROUNDS,
    });
    if (canRun) {
      const refinement = await insertRefinement(trx, accountId, listId, lists[1]?.id ?? null);
      await sql`select graphile_worker.add_job(
          ${AUTO_REFINE_TASK}::text,
          ${JSON.stringify({ refinementId: refinement.id })}::json,
          max_attempts => ${MAX_ATTEMPTS}::int,
          job_key => ${`ai-refine:${refinement.id}`}::text
        )`.execute(trx);
    }
    return {
      message: canRun
        ? "Refinement started; follow it with GET /ai/auto-refine/status."
        : `${MAX_RUNNING_REFINEMENTS} refinements are running; this one was not queued. Enable it again later.`,
      running: canRun,
      lists: await inOrder(trx, accountId, ids),
    };
  });
}

/**
 * `POST /ai/auto-refine/disable`: turns auto-refine off for the list and its pair; a running
 * refinement ends `paused` (its job stops at its next pass and writes nothing more).
 */
export async function disableAutoRefine(
  db: Db,
  accountId: number,
  listId: number,
): Promise<AutoRefineChange> {
  return db.transaction().execute(async (trx) => {
    // The refinement's row before the lists' rows, in the order of the job's writes (run.ts).
    const unlocked = await listAndPair(trx, accountId, listId, false);
    const run = await findRunningRefinement(
      trx,
      unlocked.map((l) => l.id),
    );
    if (run) await endRefinement(trx, run.id, "paused");
    const lists = await listAndPair(trx, accountId, listId);
    const ids = lists.map((l) => l.id);
    await setListsRefinement(trx, accountId, ids, {
      autoRefineEnabled: false,
      ...(run && { refinementStatus: "paused" as const }),
    });
    return {
      message: run
        ? "Auto-refine turned off; the running refinement was stopped."
        : "Auto-refine turned off.",
      running: false,
      lists: await inOrder(trx, accountId, ids),
    };
  });
}

/** `GET /ai/auto-refine/status`: every list of the account, or one (400 when not the account's). */
export async function autoRefineStatus(db: Db, accountId: number, listId?: number): Promise<RefinableList[]> {
  const lists = await findRefinableLists(db, accountId, listId === undefined ? undefined : [listId]);
  if (listId !== undefined && lists.length === 0) notTheAccounts("query");
  return lists;
}
