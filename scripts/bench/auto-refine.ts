import { runMigrations } from "graphile-worker";
import { pino } from "pino";
import { createAccountWithKey } from "../../src/accounts/service.js";
import { runRefinement } from "../../src/ai/auto-refine/run.js";
import { enableAutoRefine } from "../../src/ai/auto-refine/service.js";
import { AiEngine } from "../../src/ai/engine.js";
import { createDatabase, migrateToLatest } from "../../src/db/database.js";
import { createList } from "../../src/keyword-lists/service.js";
import { ensureLeads, ownDatabase } from "./lib.js";

// A keyword auto-refine of a 20-keyword list (and its negative pair) over the generated lead
// database with the built-in engine: the goal is under 2 minutes at 1M leads (issue 37).
// `BENCH_AUTO_REFINE_LEADS` sets the size (default 1,000,000).

const LEADS = Number(process.env.BENCH_AUTO_REFINE_LEADS ?? 1_000_000);
const SEED = 42;
/** Goal of one refinement, seconds. */
const GOAL_SECONDS = 120;

/** 20 positive keywords for plumbers: good ones, near misses and ones that find other trades. */
const POSITIVES = [
  "plumb",
  "plumber",
  "plumbing",
  "drain",
  "pipe",
  "sewer",
  "water heater",
  "leak",
  "rooter",
  "faucet",
  "roof",
  "hvac",
  "repair",
  "home",
  "service",
  "pros",
  "summit",
  "clean",
  "heating",
  "zzqxv",
];
const NEGATIVES = ["directory", "jobs", "careers", "home services", "supply"];

/** Runs one refinement and reports its time, rounds, scores and the lists' sizes before and after. */
export async function benchAutoRefine(databaseUrl: string): Promise<Record<string, unknown>> {
  const own = await ownDatabase(databaseUrl, "auto_refine");
  const { db, pool } = createDatabase(own.url, 4);
  try {
    await migrateToLatest(db);
    // The job queue enable writes to (its job is not run here: the refinement runs in-process).
    await runMigrations({ pgPool: pool });
    const loaded = await ensureLeads(db, LEADS, SEED);
    const { accountId } = await createAccountWithKey(db, {
      email: `bench-refine-${Date.now()}@example.com`,
      plan: "enterprise",
      permanentCredits: 0,
    });
    const negative = await createList(db, accountId, {
      name: "Not plumbers",
      type: "negative",
      keywords: NEGATIVES,
      sourceCategories: ["Plumber"],
    });
    const positive = await createList(db, accountId, {
      name: "Plumbers",
      type: "positive",
      keywords: POSITIVES,
      sourceCategories: ["Plumber"],
      pairedListId: negative.id,
    });
    const started = await enableAutoRefine(db, accountId, positive.id);
    if (!started.running) throw new Error("the refinement did not start (3 running?)");
    const run = await db
      .selectFrom("ai_refinements")
      .select("id")
      .where("list_id", "=", positive.id)
      .executeTakeFirstOrThrow();
    const begin = performance.now();
    await runRefinement(db, new AiEngine(db, null), run.id, {
      logger: pino({ level: "silent" }),
      lastAttempt: true,
    });
    const seconds = Number(((performance.now() - begin) / 1000).toFixed(1));
    const lists = await db
      .selectFrom("keyword_lists")
      .select(["type", "keywords", "refinement_status", "scores_per_round"])
      .where("account_id", "=", accountId)
      .execute();
    const after = (type: string) => lists.find((l) => l.type === type);
    return {
      leads: loaded.leads,
      importSeconds: loaded.importSeconds,
      seconds,
      goalSeconds: GOAL_SECONDS,
      withinGoal: seconds < GOAL_SECONDS,
      status: after("positive")?.refinement_status,
      scoresPerRound: after("positive")?.scores_per_round,
      positives: { before: POSITIVES.length, after: after("positive")?.keywords },
      negatives: { before: NEGATIVES.length, after: after("negative")?.keywords },
    };
  } finally {
    await db.destroy();
    await own.drop();
  }
}
