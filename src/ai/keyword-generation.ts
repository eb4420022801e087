import { sql } from "kysely";
import type { Logger } from "pino";
import type { Db } from "../db/database.js";
import type { StoredGeneratedList } from "../db/schema/ai.js";
import { errors } from "../http/errors.js";
import { replaceAllLists } from "../keyword-lists/service.js";
import type { AiEngine } from "./engine.js";
import { AiUnavailableError } from "./errors.js";
import {
  completeGeneration,
  failAbandonedGenerations,
  failGeneration,
  findAccountTargeting,
  insertGenerationUnlessActive,
  listGenerations,
  lockRunningGeneration,
  startGeneration,
  type KeywordGeneration,
} from "./repository.js";

/** The graphile-worker task that runs one keyword generation. */
export const GENERATE_KEYWORDS_TASK = "ai__generate_keywords";
/** A generation still pending or running this long after its request is taken for abandoned. */
const ABANDONED_AFTER_MS = 15 * 60_000;
/** Attempts of the task (a crash or a database error; a model failure ends the generation at once). */
const MAX_ATTEMPTS = 3;
/** `GET /ai/keyword-status` lists the generations of the last 24 hours, at most 100. */
const STATUS_WINDOW_MS = 24 * 3_600_000;
const STATUS_LIMIT = 100;

/** The answer to `POST /ai/generate-keywords`. */
export interface GenerationAccepted {
  message: string;
  status: "pending" | "running";
}

/**
 * Starts a keyword generation of the account from its target categories (400 `bad_request`
 * without any), or, when one is pending or running, answers with that one: the row and its
 * background task are written in one transaction, and a partial unique index keeps one active
 * generation per account also under concurrent requests.
 */
export async function requestGeneration(db: Db, accountId: number): Promise<GenerationAccepted> {
  return db.transaction().execute(async (trx) => {
    const targeting = await findAccountTargeting(trx, accountId);
    if (!targeting || targeting.targetCategories.length === 0) {
      throw errors.badRequest("The account has no target categories: run POST /ai/suggest-categories first.");
    }
    await failAbandonedGenerations(trx, accountId, new Date(Date.now() - ABANDONED_AFTER_MS));
    const { generation, created } = await insertGenerationUnlessActive(
      trx,
      accountId,
      targeting.targetCategories,
    );
    if (!created) {
      return {
        message: "A keyword generation is already under way; follow it with GET /ai/keyword-status.",
        status: generation.status === "running" ? "running" : "pending",
      };
    }
    await sql`select graphile_worker.add_job(
        ${GENERATE_KEYWORDS_TASK}::text,
        ${JSON.stringify({ generationId: generation.id })}::json,
        max_attempts => ${MAX_ATTEMPTS}::int,
        job_key => ${`ai-keywords:${generation.id}`}::text
      )`.execute(trx);
    return {
      message: "Keyword generation started; follow it with GET /ai/keyword-status.",
      status: "pending",
    };
  });
}

/** The account's generations of the last 24 hours, newest first. */
export function recentGenerations(db: Db, accountId: number): Promise<KeywordGeneration[]> {
  return listGenerations(db, accountId, new Date(Date.now() - STATUS_WINDOW_MS), STATUS_LIMIT);
}

/**
 * Runs one generation: the engine writes the lists, then one transaction replaces the account's
 * keyword lists with them and marks the generation completed with a copy of what it saved (only
 * if it is still running, so a run again after a crash saves nothing twice). A model failure ends
 * it `failed` with the lists unchanged; other errors are retried by graphile-worker, and the last
 * attempt's failure ends it `failed` too.
 */
export async function runGeneration(
  db: Db,
  engine: AiEngine,
  generationId: string,
  options: { logger: Logger; lastAttempt: boolean; signal?: AbortSignal },
): Promise<void> {
  const generation = await startGeneration(db, generationId);
  if (!generation) return; // finished (an earlier run) or forgotten
  try {
    const targeting = await findAccountTargeting(db, generation.accountId);
    if (!targeting) return; // the account is gone (its generations with it)
    const lists = await engine.generateKeywords(
      { ...targeting, targetCategories: generation.sourceCategories },
      options.signal,
    );
    await db.transaction().execute(async (trx) => {
      if (!(await lockRunningGeneration(trx, generationId))) return;
      const saved = await replaceAllLists(trx, generation.accountId, lists);
      const stored: StoredGeneratedList[] = saved.map((list) => ({
        id: list.id,
        name: list.name,
        type: list.type,
        keywords: list.keywords,
        sourceCategories: list.sourceCategories,
        createdAt: list.createdAt.toISOString(),
      }));
      await completeGeneration(trx, generationId, stored);
    });
  } catch (err) {
    if (err instanceof AiUnavailableError) {
      options.logger.warn({ generationId, failure: err.failure }, "keyword generation failed");
      await failGeneration(db, generationId, err.message);
      return;
    }
    if (options.lastAttempt) {
      options.logger.error({ err, generationId }, "keyword generation failed");
      await failGeneration(db, generationId, "An unexpected error occurred.");
      return;
    }
    throw err;
  }
}
