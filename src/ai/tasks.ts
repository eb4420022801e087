import type { Task } from "graphile-worker";
import type { Logger } from "pino";
import type { Db } from "../db/database.js";
import { classifyPendingLeads } from "./classification.js";
import type { AiEngine } from "./engine.js";
import { AUTO_REFINE_TASK, runRefinement } from "./auto-refine/run.js";
import { AiUnavailableError } from "./errors.js";
import { GENERATE_KEYWORDS_TASK, runGeneration } from "./keyword-generation.js";

/** The graphile-worker task that classifies leads without `aiCategoryEstimation`. */
export const CLASSIFY_LEADS_TASK = "ai__classify_leads";

/** Every minute; one run works at most 45 seconds, so runs do not overlap. */
export const AI_CRONTAB = `* * * * * ${CLASSIFY_LEADS_TASK} ?max=1\n`;
export const CLASSIFY_BUDGET_MS = 45_000;
/** Pause between batches (docs/performance.md, AI classification). */
export const CLASSIFY_PAUSE_MS = 100;
/** ... and at least 3 times as long as the batch took: at most a quarter of one connection's time. */
export const CLASSIFY_IDLE_FACTOR = 3;

/** What the AI tasks need. */
export interface AiTaskDeps {
  db: Db;
  engine: AiEngine;
  logger: Logger;
}

/**
 * The AI helpers' worker tasks: keyword generation, keyword auto-refine and the background
 * classification of leads.
 */
export function aiTaskList(deps: AiTaskDeps): Record<string, Task> {
  return {
    [GENERATE_KEYWORDS_TASK]: async (payload, helpers) => {
      const generationId = (payload as { generationId?: unknown } | null)?.generationId;
      if (typeof generationId !== "string") {
        deps.logger.error({ payload }, `${GENERATE_KEYWORDS_TASK} without a generationId: dropped`);
        return;
      }
      await runGeneration(deps.db, deps.engine, generationId, {
        logger: deps.logger,
        lastAttempt: helpers.job.attempts >= helpers.job.max_attempts,
        signal: helpers.abortSignal,
      });
    },
    [AUTO_REFINE_TASK]: async (payload, helpers) => {
      const refinementId = (payload as { refinementId?: unknown } | null)?.refinementId;
      if (typeof refinementId !== "string") {
        deps.logger.error({ payload }, `${AUTO_REFINE_TASK} without a refinementId: dropped`);
        return;
      }
      await runRefinement(deps.db, deps.engine, refinementId, {
        logger: deps.logger,
        lastAttempt: helpers.job.attempts >= helpers.job.max_attempts,
        signal: helpers.abortSignal,
      });
    },
    [CLASSIFY_LEADS_TASK]: async (_payload, helpers) => {
      try {
        const done = await classifyPendingLeads(deps.db, deps.engine, {
          budgetMs: CLASSIFY_BUDGET_MS,
          pauseMs: CLASSIFY_PAUSE_MS,
          idleFactor: CLASSIFY_IDLE_FACTOR,
          signal: helpers.abortSignal,
        });
        if (done.examined > 0) deps.logger.info(done, "leads classified");
      } catch (err) {
        // The model failing: the batch is tried again by the next run; nothing to retry now.
        if (!(err instanceof AiUnavailableError)) throw err;
        deps.logger.warn({ failure: err.failure }, "lead classification paused: the AI model failed");
      }
    },
  };
}
