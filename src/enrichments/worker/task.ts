import { randomUUID } from "node:crypto";
import type { Task, TaskList } from "graphile-worker";
import { HostGate } from "../crawler/host-gate.js";
import {
  claimRun,
  findStalledRunIds,
  LeaseLostError,
  queueRun,
  RUN_TASK,
  updateLeasedRun,
} from "../repository.js";
import type { EnrichmentRun } from "../run.js";
import { scrapeSlice } from "./live.js";
import { matchNextBatch } from "./matching.js";
import { finishRun, publishResult } from "./publish.js";
import { DEFAULT_SETTINGS, type EnrichmentWorkerDeps, type RunContext } from "./settings.js";

export { RUN_TASK } from "../repository.js";
/** Hands runs of crashed workers back to the queue (crontab, every minute). */
export const SWEEP_TASK = "enrichments__sweep";
export const ENRICHMENTS_CRONTAB = `* * * * * ${SWEEP_TASK}\n`;

/** How one slice of a run ended. */
export type SliceEnd = "finished" | "queued_again" | "busy";

/** The context of a process's runs: settings filled in, one host gate for all of them. */
export function runContext(deps: EnrichmentWorkerDeps): RunContext {
  const settings = { ...DEFAULT_SETTINGS, ...deps.settings };
  return { ...deps, settings, gate: new HostGate(settings.politenessDelayMs) };
}

/**
 * One slice of a run (`sliceMs`): takes the run's lease (or returns `busy` when a live worker
 * holds it or the run is finished), moves it through its statuses (matching batches, live
 * fetching, publishing, finishing) and, when the slice ends first, hands it back to the queue with
 * its lease released, in one transaction. A failure of the last attempt fails the run (database
 * matches charged before stay charged; live results are not charged).
 */
export async function processRunSlice(
  ctx: RunContext,
  runId: number,
  attempt: { attempts: number; maxAttempts: number } = { attempts: 1, maxAttempts: 1 },
): Promise<SliceEnd> {
  const token = randomUUID();
  let run: EnrichmentRun | undefined = await claimRun(ctx.db, runId, token, ctx.settings.leaseStaleMs);
  if (!run) return "busy";
  const sliceEnd = Date.now() + ctx.settings.sliceMs;
  try {
    while (Date.now() < sliceEnd) {
      const before: EnrichmentRun = run;
      if (before.status === "matching") run = await matchNextBatch(ctx, before, token);
      else if (before.status === "scraping") {
        run = await scrapeSlice(ctx, before, token);
        if (run.status === "scraping") break;
      } else if (before.status === "merging") run = await publishResult(ctx, before, token);
      else if (before.status === "delivering") {
        await finishRun(ctx, before, token);
        return "finished";
      } else return "finished";
    }
    await ctx.db.transaction().execute(async (trx) => {
      await updateLeasedRun(trx, runId, token, {}, { releaseLease: true });
      await queueRun(trx, runId);
    });
    return "queued_again";
  } catch (err) {
    if (err instanceof LeaseLostError) return "busy";
    if (attempt.attempts >= attempt.maxAttempts) {
      ctx.logger.error({ err, runId }, "enrichment run failed");
      await updateLeasedRun(
        ctx.db,
        runId,
        token,
        {},
        {
          status: "failed",
          creditsFinal: true,
          completed: true,
          releaseLease: true,
          error: "The run failed after repeated errors; database matches charged before stay charged.",
        },
      ).catch(() => undefined);
      return "finished";
    }
    // Let the next attempt take the run at once.
    await updateLeasedRun(ctx.db, runId, token, {}, { releaseLease: true }).catch(() => undefined);
    throw err;
  }
}

/** Queues the unfinished runs whose worker stopped sending heartbeats; returns how many. */
export async function sweepStalledRuns(ctx: RunContext): Promise<number> {
  const ids = await findStalledRunIds(ctx.db, ctx.settings.leaseStaleMs);
  for (const id of ids) await queueRun(ctx.db, id);
  if (ids.length > 0) ctx.logger.warn({ runs: ids }, "stalled enrichment runs queued again");
  return ids.length;
}

function runIdOf(payload: unknown): number | undefined {
  const id = (payload as { runId?: unknown } | null)?.runId;
  return typeof id === "number" && Number.isSafeInteger(id) ? id : undefined;
}

/** The graphile-worker tasks of enrichments (`enrichments__run`, `enrichments__sweep`). */
export function enrichmentTaskList(deps: EnrichmentWorkerDeps): TaskList {
  const ctx = runContext(deps);
  const run: Task = async (payload, helpers) => {
    const runId = runIdOf(payload);
    if (runId === undefined) return;
    await processRunSlice(ctx, runId, {
      attempts: helpers.job.attempts,
      maxAttempts: helpers.job.max_attempts,
    });
  };
  const sweep: Task = async () => {
    await sweepStalledRuns(ctx);
  };
  return { [RUN_TASK]: run, [SWEEP_TASK]: sweep };
}
