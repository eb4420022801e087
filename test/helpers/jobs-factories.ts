import { AiEngine } from "../../src/ai/engine.js";
import { TEST_SIGNING_SECRET } from "./signing-secret.js";
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { run, type Runner, type TaskList } from "graphile-worker";
import { pino } from "pino";
import { chargeCredits, lockAccountCredits } from "../../src/credits/ledger.js";
import { createDatabase } from "../../src/db/database.js";
import type { AppContext } from "../../src/app/context.js";
import { defineJobKind, jobTaskList, JOB_LIFETIMES, type JobAnswerOf } from "../../src/jobs/index.js";
import { workerLogger } from "../../src/jobs/runtime.js";
import { LocalDiskStorage } from "../../src/storage/local-disk.js";
import { enrichmentTaskList } from "../../src/enrichments/worker/task.js";
import type { EnrichmentWorkerDeps } from "../../src/enrichments/worker/settings.js";

// Helpers of the job-protocol tests. No vitest import: this file is also the entry point of a
// worker process that the crash test kills (see startWorkerProcess).

const silent = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });

/** Starts an in-process graphile-worker runner with the job tasks, on the test database. */
export async function startJobRunner(ctx: AppContext, concurrency = 8): Promise<Runner> {
  return startRunner(ctx, concurrency, 200, {
    ...jobTaskList({
      db: ctx.db,
      storage: ctx.storage,
      logger: silent,
      signingSecret: ctx.signingSecret,
      // The AI helpers' job (suggest-categories) on the built-in back end.
      services: { ai: { engine: new AiEngine(ctx.db, null), outbound: ctx.outbound } },
    }),
    // Enrichment runs submitted by a test are processed too (politeness delay off).
    ...enrichmentTasks(ctx, ctx.outbound, {}),
  });
}

/**
 * Starts an in-process runner with only the enrichment tasks, through `outbound` (a test's own,
 * e.g. with a host-name stub), with tiny slices: a run goes back to the queue between its steps,
 * so a test sees it move through its statuses.
 */
export async function startEnrichmentRunner(
  ctx: AppContext,
  outbound: AppContext["outbound"],
  concurrency = 1,
): Promise<Runner> {
  return startRunner(ctx, concurrency, 100, enrichmentTasks(ctx, outbound, { sliceMs: 1, matchBatch: 1 }));
}

/** The enrichment tasks on the test's context, politeness delay off, with `settings` added. */
function enrichmentTasks(
  ctx: AppContext,
  outbound: AppContext["outbound"],
  settings: EnrichmentWorkerDeps["settings"],
): TaskList {
  return enrichmentTaskList({
    db: ctx.db,
    storage: ctx.storage,
    outbound,
    signingSecret: ctx.signingSecret,
    publicBaseUrl: ctx.config.publicBaseUrl,
    logger: silent,
    settings: { politenessDelayMs: 0, ...settings },
  });
}

/** An in-process graphile-worker runner of `taskList` on the test database's queue. */
async function startRunner(
  ctx: AppContext,
  concurrency: number,
  pollInterval: number,
  taskList: TaskList,
): Promise<Runner> {
  await ctx.jobs.ensureQueue();
  return run({
    pgPool: ctx.pool,
    concurrency,
    noHandleSignals: true,
    pollInterval,
    taskList,
    logger: workerLogger(silent),
  });
}

/** A latch per name: `waitFor` resolves once `release` was called (before or after). */
export class Gates {
  private readonly gates = new Map<string, { promise: Promise<void>; open: () => void }>();

  private gate(name: string) {
    let gate = this.gates.get(name);
    if (!gate) {
      let open: () => void = () => {};
      const promise = new Promise<void>((resolve) => {
        open = resolve;
      });
      gate = { promise, open };
      this.gates.set(name, gate);
    }
    return gate;
  }

  /** Resolves when the gate opens; rejects when `signal` aborts first. */
  waitFor(name: string, signal?: AbortSignal): Promise<void> {
    const { promise } = this.gate(name);
    if (!signal) return promise;
    return Promise.race([
      promise,
      new Promise<never>((_resolve, reject) => {
        if (signal.aborted) reject(signal.reason as Error);
        signal.addEventListener("abort", () => reject(signal.reason as Error), { once: true });
      }),
    ]);
  }

  release(name: string): void {
    this.gate(name).open();
  }

  /** Opens every gate created so far (after each test, so no job keeps a worker busy). */
  releaseAll(): void {
    for (const gate of this.gates.values()) gate.open();
  }
}

/** Input of the crash-test kind: when to hang on the first run. */
export interface CrashInput {
  scheduleId: number;
  hang: "before-commit" | "after-commit";
}

/** A schedule trigger's answer, as the test kinds give it. */
export function triggerAnswer(message: string): JobAnswerOf<"triggerEmailSchedule"> {
  return {
    status: 200,
    body: { data: { sent: true, leadCount: 1, creditsUsed: 1, recipients: 1, message } },
  };
}

/**
 * Test kind for the crash test: charges 1 credit with its answer (job.commit), and on its first
 * run hangs forever, before or after that commit, so the test can kill its worker mid-job.
 */
export const crashTestJob = defineJobKind<CrashInput, "triggerEmailSchedule">({
  kind: "test_crash_charge",
  operation: "triggerEmailSchedule",
  capacity: 5,
  timeoutMs: 10 * 60_000,
  ...JOB_LIFETIMES.scheduleTrigger,
  async run(input, job) {
    await job.progress({ phase: "sending", done: 1, total: 2, label: "steps" });
    const answer = triggerAnswer(`run ${job.attempt}`);
    if (job.attempt === 1 && input.hang === "before-commit") await new Promise(() => {});
    await job.db.transaction().execute(async (trx) => {
      const { periodStart } = await lockAccountCredits(trx, job.accountId);
      await chargeCredits(trx, {
        accountId: job.accountId,
        periodStart,
        tenths: 10,
        reason: "test_job",
        reference: job.jobId,
      });
      await job.commit(trx, answer);
    });
    if (job.attempt === 1 && input.hang === "after-commit") await new Promise(() => {});
    return answer;
  },
});

/**
 * Starts a separate worker process (this file) on the test database, running the job tasks;
 * resolves once it is ready. Kill it with `child.kill("SIGKILL")` to simulate a crash.
 */
export async function startWorkerProcess(databaseUrl: string, filesDir: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", fileURLToPath(import.meta.url), "--worker", databaseUrl, filesDir],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  await new Promise<void>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("ready")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`worker process exited with ${code}`)));
  });
  return child;
}

async function workerProcessMain(databaseUrl: string, filesDir: string): Promise<void> {
  const { db, pool } = createDatabase(databaseUrl, 5);
  await run({
    pgPool: pool,
    concurrency: 2,
    noHandleSignals: true,
    pollInterval: 200,
    taskList: jobTaskList({
      db,
      storage: new LocalDiskStorage(filesDir),
      logger: silent,
      signingSecret: TEST_SIGNING_SECRET,
    }),
    logger: workerLogger(silent),
  });
  process.stdout.write("ready\n");
}

if (process.argv[2] === "--worker" && process.argv[1] === fileURLToPath(import.meta.url)) {
  workerProcessMain(process.argv[3]!, process.argv[4]!).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
