import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { sql } from "kysely";
import { createAccountWithKey } from "../../src/accounts/service.js";
import { classifyPendingLeads } from "../../src/ai/classification.js";
import { AiEngine } from "../../src/ai/engine.js";
import { CLASSIFY_BUDGET_MS, CLASSIFY_IDLE_FACTOR, CLASSIFY_PAUSE_MS } from "../../src/ai/tasks.js";
import { createDatabase, migrateToLatest, type Db } from "../../src/db/database.js";
import { generateLeads } from "../../src/leads/import/generate.js";
import { STATES } from "../../src/leads/import/generate-data.js";
import { importLeadRecords } from "../../src/leads/import/importer.js";
import { parseSearchFilters } from "../../src/leads/search/filters.js";
import { searchPageJsonQuery } from "../../src/leads/search/query.js";

const LEADS = Number(process.env.BENCH_AI_LEADS ?? 300_000);
/** Different searches, repeated through each phase (idle, during classification, idle again). */
const SEARCHES = Number(process.env.BENCH_AI_SEARCHES ?? 200);
/** Length of each phase. */
const PHASE_SECONDS = Number(process.env.BENCH_AI_PHASE_SECONDS ?? 20);
const SEED = 42;
const CHILD_FLAG = "BENCH_AI_CLASSIFIER";

const POSITIVE = [
  "plumb",
  "roof",
  "hvac",
  "landscap",
  "dental",
  "auto",
  "bakery",
  "salon",
  "electric",
  "paint",
  "pest",
  "clean",
  "fitness",
  "insurance",
  "coffee",
  "repair",
  "summit",
  "family",
];
const NEGATIVE = ["commercial", "pros", "llc", "group", "the", "service"];

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Searches of the search benchmark's shape: two positive keywords, one state, one negative, limit 50. */
function searchQueries(count: number, seed: number): string[] {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const queries: string[] = [];
  while (queries.length < count) {
    const a = pick(POSITIVE);
    const b = pick(POSITIVE);
    if (a === b) continue;
    queries.push(
      new URLSearchParams({
        positiveKeywords: `${a},${b}`,
        stateInclude: pick(STATES).code,
        negativeKeywords: pick(NEGATIVE),
        limit: "50",
      }).toString(),
    );
  }
  return queries;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return Number(sorted[Math.max(0, index)]!.toFixed(1));
}

function summary(ms: number[]): { p50: number; p95: number; p99: number } {
  const sorted = [...ms].sort((x, y) => x - y);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99) };
}

async function unclassified(db: Db): Promise<number> {
  const row = await sql<{
    n: string;
  }>`select count(*) as n from leads where ai_category_estimation is null`.execute(db);
  return Number(row.rows[0]?.n ?? 0);
}

/** Loads generated leads (an existing load is reused) and clears the categories of half of them. */
async function prepare(db: Db): Promise<number> {
  const count = Number(
    (
      await db
        .selectFrom("leads")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirstOrThrow()
    ).n,
  );
  if (count < LEADS) await importLeadRecords(db, generateLeads(LEADS, SEED));
  await sql`update leads set ai_category_estimation = null where id % 2 = 0`.execute(db);
  await db.deleteFrom("ai_unclassified_leads").execute();
  await db.updateTable("ai_classification_state").set({ last_lead_id: 0 }).execute();
  await sql`vacuum analyze leads`.execute(db);
  return Math.max(count, LEADS);
}

/**
 * The background classification against search: the same searches (the search SQL of `GET
 * /leads`, run directly) idle, while a separate process classifies leads without categories
 * exactly as the `ai__classify_leads` task does (built-in back end, batches of 100, its pause),
 * and idle again. Goal: search p95 during classification within 1.2x of idle.
 */
export async function benchAi(databaseUrl: string): Promise<Record<string, unknown>> {
  const { db, pool } = createDatabase(databaseUrl, 4);
  await migrateToLatest(db);
  const leads = await prepare(db);
  const { accountId } = await createAccountWithKey(db, {
    email: `bench-ai-${Date.now()}@example.com`,
    plan: "enterprise",
    permanentCredits: 1_000_000,
  });
  const queries = searchQueries(SEARCHES, SEED);
  const compiled = queries.map((query) =>
    searchPageJsonQuery(parseSearchFilters(query, "query"), { accountId, cap: 1_000_000 }).compile(db),
  );
  /** Runs the searches one after the other, round and round, for `seconds`. */
  const runSearches = async (seconds: number): Promise<number[]> => {
    const times: number[] = [];
    const until = performance.now() + seconds * 1000;
    for (let i = 0; performance.now() < until; i += 1) {
      const query = compiled[i % compiled.length]!;
      const started = performance.now();
      await pool.query(query.sql, query.parameters as unknown[]);
      times.push(performance.now() - started);
    }
    return times;
  };
  let child: ChildProcess | undefined;
  try {
    await runSearches(5); // warm-up
    const idleBefore = await runSearches(PHASE_SECONDS);
    const before = await unclassified(db);
    child = fork(fileURLToPath(import.meta.url), [], {
      execArgv: ["--import", "tsx"],
      env: { ...process.env, [CHILD_FLAG]: "1", BENCH_AI_DATABASE_URL: databaseUrl },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    // Measured once the classifier is under way (its start-up is not classification).
    while ((await unclassified(db)) === before) await new Promise((resolve) => setTimeout(resolve, 200));
    const startCount = await unclassified(db);
    const startedAt = performance.now();
    const during = await runSearches(PHASE_SECONDS);
    const seconds = (performance.now() - startedAt) / 1000;
    const afterDuring = await unclassified(db);
    child.kill("SIGTERM");
    await new Promise((resolve) => child!.once("exit", resolve));
    child = undefined;
    const idleAfter = await runSearches(PHASE_SECONDS);
    const idle = summary([...idleBefore, ...idleAfter]);
    const busy = summary(during);
    return {
      leads,
      phaseSeconds: PHASE_SECONDS,
      searches: { idle: idleBefore.length + idleAfter.length, duringClassification: during.length },
      unclassifiedAtStart: before,
      classifiedDuringSearches: startCount - afterDuring,
      classifiedPerSecond: Math.round((startCount - afterDuring) / seconds),
      idleMs: idle,
      duringClassificationMs: busy,
      ratioP95: Number((busy.p95 / Math.max(0.1, idle.p95)).toFixed(2)),
      goal: "search p95 during classification <= 1.2x idle",
    };
  } finally {
    child?.kill("SIGKILL");
    await db.destroy();
  }
}

/** The classifier process of the benchmark: the task's loop until stopped. */
async function classifierProcess(): Promise<void> {
  const { db } = createDatabase(process.env.BENCH_AI_DATABASE_URL!, 2);
  const engine = new AiEngine(db, null);
  const controller = new AbortController();
  process.once("SIGTERM", () => controller.abort());
  while (!controller.signal.aborted) {
    const done = await classifyPendingLeads(db, engine, {
      budgetMs: CLASSIFY_BUDGET_MS,
      pauseMs: CLASSIFY_PAUSE_MS,
      idleFactor: CLASSIFY_IDLE_FACTOR,
      signal: controller.signal,
    });
    if (done.examined === 0) break;
  }
  await db.destroy();
}

if (process.env[CHILD_FLAG] === "1") {
  classifierProcess().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
