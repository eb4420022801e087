import type { Logger } from "pino";
import type { Db } from "../../db/database.js";
import type { StoredRefinementScore } from "../../db/schema/leads.js";
import type { AiEngine } from "../engine.js";
import { AiUnavailableError } from "../errors.js";
import { builtInJudge, type RefineJudge } from "./judge.js";
import { modelJudge } from "./model-judge.js";
import { refineRound } from "./passes.js";
import {
  beat,
  endRefinement,
  findRefinableLists,
  findRefinement,
  setListsRefinement,
  writeRound,
  type RefinableList,
} from "./repository.js";

/** The graphile-worker task that runs one refinement. */
export const AUTO_REFINE_TASK = "ai__auto_refine";
/** Source categories a refinement uses at most. */
export const MAX_SOURCE_CATEGORIES = 3;
/** Rounds of a refinement: the first, and one retry when its score is below LOW_SCORE. */
export const MAX_ROUNDS = 2;
export const LOW_SCORE = 6;
/** Model calls one refinement may make (past them the built-in judgement decides). */
export const MODEL_CALL_BUDGET = 60;

/** The refinement was disabled (or ended) while it ran: stop without writing more. */
class Stopped extends Error {}

/** The lists of a refinement: the positive and negative one (either may be absent). */
export interface RefinementLists {
  positive: RefinableList | null;
  negative: RefinableList | null;
}

/** A list and its pair as positive and negative. */
export function sortPair(lists: readonly RefinableList[]): RefinementLists {
  return {
    positive: lists.find((l) => l.type === "positive") ?? null,
    negative: lists.find((l) => l.type === "negative") ?? null,
  };
}

/** The source categories of a refinement: the positive list's, else the negative's; at most 3. */
export function sourceCategoriesOf(lists: RefinementLists): string[] {
  const from = lists.positive?.sourceCategories?.length
    ? lists.positive.sourceCategories
    : (lists.negative?.sourceCategories ?? []);
  return from.slice(0, MAX_SOURCE_CATEGORIES);
}

/**
 * Runs one refinement: rounds of the passes (passes.ts) judged by the configured model or the
 * built-in engine; after each round one transaction rewrites the lists' keywords and appends the
 * round's score (only while the refinement is running, so a disable stops it at the next pass and
 * nothing is written after); a second round runs when the first scored below LOW_SCORE. At the end
 * auto-refine turns itself off (`completed`). A model failure ends it `failed` with the keywords
 * of finished rounds kept; other errors are retried by graphile-worker, the last attempt's too
 * ends it `failed`.
 */
export async function runRefinement(
  db: Db,
  engine: AiEngine,
  refinementId: string,
  options: { logger: Logger; lastAttempt: boolean; signal?: AbortSignal },
): Promise<void> {
  const run = await findRefinement(db, refinementId);
  if (!run || run.status !== "running") return;
  const ids = run.pairedListId === null ? [run.listId] : [run.listId, run.pairedListId];
  const fail = async (message: string) => {
    await db.transaction().execute(async (trx) => {
      if (!(await endRefinement(trx, refinementId, "failed", message))) return;
      await setListsRefinement(trx, run.accountId, ids, {
        refinementStatus: "failed",
        autoRefineEnabled: false,
      });
    });
  };
  try {
    const lists = sortPair(await findRefinableLists(db, run.accountId, ids));
    const categories = sourceCategoriesOf(lists).map((c) => c.trim().toLowerCase());
    if (categories.length === 0 || (!lists.positive && !lists.negative)) {
      await fail("The list has no source categories.");
      return;
    }
    const judge: RefineJudge = engine.model
      ? modelJudge(engine.model, MODEL_CALL_BUDGET, options.signal)
      : builtInJudge;
    const checkpoint = async () => {
      if (options.signal?.aborted) throw new Stopped("aborted");
      if (!(await beat(db, refinementId))) throw new Stopped("disabled");
    };
    let positives = lists.positive?.keywords ?? [];
    let negatives = lists.negative?.keywords ?? [];
    const scores: StoredRefinementScore[] = [];
    for (let round = 1; round <= MAX_ROUNDS; round += 1) {
      await checkpoint();
      await setListsRefinement(db, run.accountId, ids, { currentRound: round });
      const result = await refineRound(
        db,
        judge,
        {
          positives,
          negatives,
          categories,
          hasPositiveList: lists.positive !== null,
          hasNegativeList: lists.negative !== null,
        },
        checkpoint,
      );
      positives = result.positives;
      negatives = result.negatives;
      scores.push({ round, score: result.score, reasoning: result.reasoning });
      const written = await db.transaction().execute(async (trx) => {
        const current = await findRefinement(trx, refinementId, true);
        if (current?.status !== "running") return false;
        for (const list of [lists.positive, lists.negative]) {
          if (!list) continue;
          await writeRound(trx, run.accountId, list.id, {
            keywords: list.type === "positive" ? positives : negatives,
            scoresPerRound: scores,
            currentRound: round,
          });
        }
        return true;
      });
      if (!written) return;
      if (result.score >= LOW_SCORE) break;
    }
    await db.transaction().execute(async (trx) => {
      if (!(await endRefinement(trx, refinementId, "completed"))) return;
      await setListsRefinement(trx, run.accountId, ids, {
        refinementStatus: "completed",
        autoRefineEnabled: false,
      });
    });
    options.logger.info(
      { refinementId, judge: judge.name, scores: scores.map((s) => s.score) },
      "keyword list refined",
    );
  } catch (err) {
    if (err instanceof Stopped) return;
    if (err instanceof AiUnavailableError) {
      options.logger.warn({ refinementId, failure: err.failure }, "keyword refinement failed");
      await fail(err.message);
      return;
    }
    if (options.lastAttempt) {
      options.logger.error({ err, refinementId }, "keyword refinement failed");
      await fail("An unexpected error occurred.");
      return;
    }
    throw err;
  }
}
