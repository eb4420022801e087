import { run } from "graphile-worker";
import { sql } from "kysely";
import { pino } from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runRefinement } from "../src/ai/auto-refine/run.js";
import { MAX_RUNNING_REFINEMENTS } from "../src/ai/auto-refine/service.js";
import { ChatCompletionsModel } from "../src/ai/chat-model.js";
import { AiEngine } from "../src/ai/engine.js";
import { aiTaskList } from "../src/ai/tasks.js";
import { presetSearchFilters } from "../src/filter-presets/service.js";
import { importLeadRecords } from "../src/leads/import/importer.js";
import { generateLeads } from "../src/leads/import/generate.js";
import { parseSearchFilters } from "../src/leads/search/filters.js";
import { searchCondition } from "../src/leads/search/query.js";
import { useTestApp } from "./helpers/app.js";
import { ChatCompletionsServer, userInput, type ChatCall } from "./helpers/chat-completions-server.js";
import { buildAccount } from "./helpers/factories.js";
import { expectKeyAndPlanRequired } from "./helpers/lead-records-factories.js";

// Keyword auto-refine: enable / disable / status over HTTP (checked against openapi.yaml by the
// test app), the refinement job on generated leads with the built-in engine and with a local
// Chat Completions server, the deployment-wide limit of 3 running refinements, and presets that
// use a refined list.

const t = useTestApp();
const silent = pino({ level: "silent" });
const chat = new ChatCompletionsServer();
type Auth = { Authorization: string };
type ListBody = {
  id: number;
  keywords: string[];
  autoRefineEnabled: boolean;
  refinementStatus: string | null;
  scoresPerRound: { round: number; score: number; reasoning: string }[];
  pairedListId: number | null;
};

beforeAll(async () => {
  await chat.start();
  await importLeadRecords(t.ctx.db, generateLeads(3_000, 23));
  await t.ctx.jobs.ensureQueue();
});
afterAll(async () => {
  await chat.stop();
});
beforeEach(async () => {
  chat.reset();
  // Each test starts with no refinement running in the deployment.
  await t.ctx.db
    .updateTable("ai_refinements")
    .set({ status: "failed" })
    .where("status", "=", "running")
    .execute();
});

async function createList(auth: Auth, body: Record<string, unknown>): Promise<ListBody> {
  return (await t.request().post("/api/v1/keyword-lists").set(auth).send(body).expect(201)).body
    .data as ListBody;
}

/** A positive plumbing list with a wrong and a dead keyword, and its negative pair. */
async function plumbingPair(auth: Auth, negatives = ["home services", "directory"]) {
  const negative = await createList(auth, {
    name: "Not plumbing",
    type: "negative",
    keywords: negatives,
    sourceCategories: ["Plumber"],
  });
  const positive = await createList(auth, {
    name: "Plumbers",
    type: "positive",
    keywords: ["plumb", "roof", "zzqxv"],
    sourceCategories: ["Plumber"],
    pairedListId: negative.id,
  });
  return { positive, negative };
}

async function listOf(auth: Auth, id: number): Promise<ListBody> {
  const lists = (await t.request().get("/api/v1/keyword-lists").set(auth).expect(200)).body
    .data as ListBody[];
  return lists.find((l) => l.id === id)!;
}

async function refinementIdOf(listId: number): Promise<string> {
  const row = await t.ctx.db
    .selectFrom("ai_refinements")
    .select("id")
    .where("list_id", "=", listId)
    .orderBy("created_at", "desc")
    .executeTakeFirstOrThrow();
  return row.id;
}

const enable = (auth: Auth, listId: unknown) =>
  t.request().post("/api/v1/ai/auto-refine/enable").set(auth).send({ listId });
const disable = (auth: Auth, listId: unknown) =>
  t.request().post("/api/v1/ai/auto-refine/disable").set(auth).send({ listId });

/** Share of the leads a search with these keywords finds that are plumbers (the service's own search). */
async function plumberShare(positiveKeywords: string[], negativeKeywords: string[]): Promise<number> {
  const filters = parseSearchFilters({ positiveKeywords, negativeKeywords }, "body");
  const rows = await t.ctx.db
    .selectFrom("leads")
    .select("category")
    .where(searchCondition(filters))
    .execute();
  if (rows.length === 0) return 0;
  return rows.filter((r) => r.category === "Plumber").length / rows.length;
}

describe("POST /ai/auto-refine/enable and the built-in engine", () => {
  it("starts a refinement of the list and its pair, which rewrites them, scores each round and turns itself off", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const { positive, negative } = await plumbingPair(auth);
    expect(positive.pairedListId).toBe(negative.id);
    expect((await listOf(auth, negative.id)).pairedListId).toBe(positive.id);

    const res = await enable(auth, positive.id).expect(200);
    expect(res.body.data.running).toBe(true);
    expect(res.headers["x-ratelimit-limit"]).toBe("5");
    expect(res.body.data.lists).toEqual([
      expect.objectContaining({ listId: positive.id, autoRefineEnabled: true, refinementStatus: "running" }),
      expect.objectContaining({ listId: negative.id, autoRefineEnabled: true, refinementStatus: "running" }),
    ]);
    // The job is queued for graphile-worker in the same transaction.
    const refinementId = await refinementIdOf(positive.id);
    const jobs = await sql<{ payload: { refinementId: string } }>`
      select j.payload from graphile_worker._private_jobs j
      join graphile_worker._private_tasks k on k.id = j.task_id
      where k.identifier = 'ai__auto_refine'`.execute(t.ctx.db);
    expect(jobs.rows.map((j) => j.payload.refinementId)).toContain(refinementId);

    const before = await plumberShare(positive.keywords, negative.keywords);
    const started = Date.now();
    await runRefinement(t.ctx.db, new AiEngine(t.ctx.db, null), refinementId, {
      logger: silent,
      lastAttempt: true,
    });
    expect(Date.now() - started).toBeLessThan(30_000);

    const refined = await listOf(auth, positive.id);
    expect(refined.keywords).toContain("plumb");
    expect(refined.keywords).not.toContain("roof"); // finds roofers: under 50% relevant
    expect(refined.keywords).not.toContain("zzqxv"); // finds nothing
    expect(refined.keywords.length).toBeGreaterThan(1); // new positives from plumbers' words
    expect(refined).toMatchObject({ autoRefineEnabled: false, refinementStatus: "completed" });
    expect(refined.scoresPerRound.length).toBeGreaterThanOrEqual(1);
    for (const [i, round] of refined.scoresPerRound.entries()) {
      expect(round.round).toBe(i + 1);
      expect(round.score).toBeGreaterThanOrEqual(1);
      expect(round.score).toBeLessThanOrEqual(10);
      expect(round.reasoning).toMatch(/sampled leads/);
    }
    const pair = await listOf(auth, negative.id);
    // "home services" removed plumbers (collateral damage): dropped; "directory" kept.
    expect(pair.keywords).not.toContain("home services");
    expect(pair.keywords).toContain("directory");
    expect(pair).toMatchObject({ autoRefineEnabled: false, refinementStatus: "completed" });
    expect(pair.scoresPerRound).toEqual(refined.scoresPerRound);
    // The refined lists find plumbers at least as precisely as before.
    expect(await plumberShare(refined.keywords, pair.keywords)).toBeGreaterThanOrEqual(before);
    expect(await plumberShare(refined.keywords, pair.keywords)).toBeGreaterThan(0.8);

    const status = await t
      .request()
      .get(`/api/v1/ai/auto-refine/status?listId=${positive.id}`)
      .set(auth)
      .expect(200);
    expect(status.headers["x-ratelimit-limit"]).toBe("60");
    expect(status.body.data).toEqual([
      {
        listId: positive.id,
        name: "Plumbers",
        type: "positive",
        autoRefineEnabled: false,
        refinementStatus: "completed",
        currentRound: refined.scoresPerRound.length,
        maxRounds: 2,
        scoresPerRound: refined.scoresPerRound,
        lastRefinedAt: expect.any(String),
        pairedListId: negative.id,
      },
    ]);
    const all = await t.request().get("/api/v1/ai/auto-refine/status").set(auth).expect(200);
    expect((all.body.data as { listId: number }[]).map((l) => l.listId).sort()).toEqual(
      [positive.id, negative.id].sort(),
    );

    // Enabling again clears the score history and starts a new refinement.
    const again = await enable(auth, positive.id).expect(200);
    expect(again.body.data.lists[0]).toMatchObject({ scoresPerRound: [], refinementStatus: "running" });
  });

  it("runs as the graphile-worker task ai__auto_refine", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const { positive } = await plumbingPair(auth);
    await enable(auth, positive.id).expect(200);
    const runner = await run({
      pgPool: t.ctx.pool,
      concurrency: 1,
      noHandleSignals: true,
      pollInterval: 100,
      taskList: aiTaskList({ db: t.ctx.db, engine: new AiEngine(t.ctx.db, null), logger: silent }),
    });
    try {
      for (let i = 0; i < 300; i += 1) {
        if ((await listOf(auth, positive.id)).refinementStatus === "completed") break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await runner.stop();
    }
    expect(await listOf(auth, positive.id)).toMatchObject({
      refinementStatus: "completed",
      autoRefineEnabled: false,
    });
  });

  it("gives schedules' presets that name the list its new keywords at their next send", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const { positive, negative } = await plumbingPair(auth);
    const stored = { hash: `nkl=${positive.id},${negative.id}` };
    await t
      .request()
      .post("/api/v1/filter-presets")
      .set(auth)
      .send({ name: "Plumbers", filters: stored })
      .expect(201);
    const before = await presetSearchFilters(t.ctx.db, accountId, stored);
    expect(before?.positiveKeywords).toEqual(expect.arrayContaining(["roof"]));
    await enable(auth, positive.id).expect(200);
    await runRefinement(t.ctx.db, new AiEngine(t.ctx.db, null), await refinementIdOf(positive.id), {
      logger: silent,
      lastAttempt: true,
    });
    // A schedule's send translates its preset with the lists as they are now (src/email-schedules/run/send.ts).
    const after = await presetSearchFilters(t.ctx.db, accountId, stored);
    const refined = await listOf(auth, positive.id);
    expect(after?.positiveKeywords).toEqual(expect.arrayContaining(refined.keywords));
    expect(after?.positiveKeywords).not.toContain("roof");
    expect(after?.negativeKeywords).toEqual(
      expect.arrayContaining((await listOf(auth, negative.id)).keywords),
    );
  });

  it("refines a list without a pair (the negative passes skipped)", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const list = await createList(auth, {
      name: "Roofers",
      type: "positive",
      keywords: ["roof", "plumb"],
      sourceCategories: ["Roofing Contractor", "Roofing"],
    });
    await enable(auth, list.id).expect(200);
    await runRefinement(t.ctx.db, new AiEngine(t.ctx.db, null), await refinementIdOf(list.id), {
      logger: silent,
      lastAttempt: true,
    });
    const refined = await listOf(auth, list.id);
    expect(refined.keywords).toContain("roof");
    expect(refined.keywords).not.toContain("plumb");
    expect(refined.scoresPerRound[0]?.reasoning).toMatch(/no paired negative list/);
  });
});

describe("POST /ai/auto-refine/disable", () => {
  it("stops a running refinement before its next pass: paused, nothing written", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const { positive, negative } = await plumbingPair(auth);
    await enable(auth, positive.id).expect(200);
    const refinementId = await refinementIdOf(positive.id);
    const res = await disable(auth, negative.id).expect(200);
    expect(res.headers["x-ratelimit-limit"]).toBe("60");
    expect(res.body.data.running).toBe(false);
    expect(res.body.data.lists).toEqual([
      expect.objectContaining({ listId: negative.id, autoRefineEnabled: false, refinementStatus: "paused" }),
      expect.objectContaining({ listId: positive.id, autoRefineEnabled: false, refinementStatus: "paused" }),
    ]);
    await runRefinement(t.ctx.db, new AiEngine(t.ctx.db, null), refinementId, {
      logger: silent,
      lastAttempt: true,
    });
    expect((await listOf(auth, positive.id)).keywords).toEqual(["plumb", "roof", "zzqxv"]);
    expect((await listOf(auth, positive.id)).refinementStatus).toBe("paused");
    // Disabling a list that is not refining only turns the switch off.
    const idle = await createList(auth, { name: "Idle", type: "positive", keywords: ["x"] });
    const off = await disable(auth, idle.id).expect(200);
    expect(off.body.data.lists).toEqual([
      expect.objectContaining({ autoRefineEnabled: false, refinementStatus: null }),
    ]);
  });
});

describe("at most 3 refinements at once in the deployment", () => {
  it("does not queue a start beyond 3 (refinementStatus stays null), also under concurrent enables", async () => {
    const accounts = await Promise.all([1, 2, 3, 4, 5].map(() => buildAccount(t.ctx.db)));
    const lists = await Promise.all(
      accounts.map((a) =>
        createList(a.auth, {
          name: "P",
          type: "positive",
          keywords: ["plumb"],
          sourceCategories: ["Plumber"],
        }),
      ),
    );
    const answers = await Promise.all(accounts.map((a, i) => enable(a.auth, lists[i]!.id).expect(200)));
    const started = answers.filter((a) => a.body.data.running);
    expect(started).toHaveLength(MAX_RUNNING_REFINEMENTS);
    for (const answer of answers.filter((a) => !a.body.data.running)) {
      expect(answer.body.data.message).toMatch(/not queued/);
      expect(answer.body.data.lists[0]).toMatchObject({ autoRefineEnabled: true, refinementStatus: null });
    }
    const running = await t.ctx.db
      .selectFrom("ai_refinements")
      .select("list_id")
      .where("status", "=", "running")
      .execute();
    expect(running).toHaveLength(3);
    // When one finishes, a start runs again.
    const first = answers.findIndex((a) => a.body.data.running);
    await runRefinement(t.ctx.db, new AiEngine(t.ctx.db, null), await refinementIdOf(lists[first]!.id), {
      logger: silent,
      lastAttempt: true,
    });
    const waiting = answers.findIndex((a) => !a.body.data.running);
    expect((await enable(accounts[waiting]!.auth, lists[waiting]!.id).expect(200)).body.data.running).toBe(
      true,
    );
  });

  it("takes a refinement without a heartbeat for 15 minutes for dead", async () => {
    const accounts = await Promise.all([1, 2, 3, 4].map(() => buildAccount(t.ctx.db)));
    const lists = await Promise.all(
      accounts.map((a) =>
        createList(a.auth, {
          name: "P",
          type: "positive",
          keywords: ["plumb"],
          sourceCategories: ["Plumber"],
        }),
      ),
    );
    for (let i = 0; i < 3; i += 1) await enable(accounts[i]!.auth, lists[i]!.id).expect(200);
    expect((await enable(accounts[3]!.auth, lists[3]!.id).expect(200)).body.data.running).toBe(false);
    await t.ctx.db
      .updateTable("ai_refinements")
      .set({ heartbeat_at: new Date(Date.now() - 16 * 60_000) })
      .where("list_id", "=", lists[0]!.id)
      .execute();
    expect((await enable(accounts[3]!.auth, lists[3]!.id).expect(200)).body.data.running).toBe(true);
    expect(await listOf(accounts[0]!.auth, lists[0]!.id)).toMatchObject({ refinementStatus: "failed" });
  });

  it("changes nothing when the list is already refining", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const { positive, negative } = await plumbingPair(auth);
    await enable(auth, positive.id).expect(200);
    const again = await enable(auth, negative.id).expect(200);
    expect(again.body.data).toMatchObject({
      running: true,
      message: expect.stringMatching(/already running/),
    });
    expect(
      await t.ctx.db.selectFrom("ai_refinements").select("id").where("list_id", "=", positive.id).execute(),
    ).toHaveLength(1);
  });
});

describe("with a model configured (a local Chat Completions server)", () => {
  function modelEngine(): AiEngine {
    const model = new ChatCompletionsModel(
      { baseUrl: chat.baseUrl, apiKey: "sk-test", model: "test-model", timeoutMs: 2_000, maxTokens: 300 },
      { maxRetries: 0 },
    );
    return new AiEngine(t.ctx.db, model);
  }

  /** A model that holds plumbers relevant and proposes `drain` / `repair` and `roof`. */
  function plumbingModel(call: ChatCall) {
    const input = userInput(call) as { leads?: { id: number; categories: string[] }[]; wrong?: unknown };
    const shape = call.body.response_format?.json_schema?.name;
    if (shape === "relevant_leads") {
      const ids = (input.leads ?? [])
        .filter((l) => l.categories.some((c) => /plumb/i.test(c)))
        .map((l) => l.id);
      return { json: { relevantIds: ids } };
    }
    return { json: { keywords: input.wrong ? ["roof", "bakery"] : ["drain", "Pipe", "roof"] } };
  }

  it("judges sampled leads with the model, within a bounded number of calls", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const { positive, negative } = await plumbingPair(auth, ["directory"]);
    chat.respond = plumbingModel;
    await enable(auth, positive.id).expect(200);
    await runRefinement(t.ctx.db, modelEngine(), await refinementIdOf(positive.id), {
      logger: silent,
      lastAttempt: true,
    });
    const refined = await listOf(auth, positive.id);
    expect(refined).toMatchObject({ refinementStatus: "completed", autoRefineEnabled: false });
    expect(refined.keywords).toContain("plumb");
    expect(refined.keywords).not.toContain("roof");
    expect(refined.keywords).toContain("drain"); // the model's proposal, confirmed by its judgement
    expect(refined.scoresPerRound[0]?.reasoning).toMatch(/judged by test-model/);
    const pair = await listOf(auth, negative.id);
    expect(pair.keywords).toContain("directory");
    expect(pair.keywords).not.toContain("bakery"); // proposed, but no lead the positives find holds it
    expect(chat.calls.length).toBeGreaterThan(0);
    // The budget: 60 calls per refinement, each asked again at most once for an unusable answer.
    expect(chat.calls.length).toBeLessThanOrEqual(60 * 2);
    expect(chat.calls.every((c) => c.body.model === "test-model")).toBe(true);
  });

  it("ends failed with the keywords unchanged when the model fails", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const { positive } = await plumbingPair(auth);
    chat.respond = () => ({ status: 500 });
    await enable(auth, positive.id).expect(200);
    await runRefinement(t.ctx.db, modelEngine(), await refinementIdOf(positive.id), {
      logger: silent,
      lastAttempt: false,
    });
    expect(await listOf(auth, positive.id)).toMatchObject({
      keywords: ["plumb", "roof", "zzqxv"],
      refinementStatus: "failed",
      autoRefineEnabled: false,
    });
  });
});

describe("errors", () => {
  it("refuses another account's list, a list without source categories and bad input, changing nothing", async () => {
    const owner = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const { positive } = await plumbingPair(owner.auth);
    for (const call of [enable, disable]) {
      const res = await call(other.auth, positive.id).expect(400);
      expect(res.body).toMatchObject({ error: "validation_error", details: [{ path: ["body", "listId"] }] });
    }
    const foreign = await t
      .request()
      .get(`/api/v1/ai/auto-refine/status?listId=${positive.id}`)
      .set(other.auth)
      .expect(400);
    expect(foreign.body.details).toEqual([expect.objectContaining({ path: ["query", "listId"] })]);
    expect(
      (await t.request().get("/api/v1/ai/auto-refine/status").set(other.auth).expect(200)).body.data,
    ).toEqual([]);

    const bare = await createList(owner.auth, { name: "Bare", type: "positive", keywords: ["plumb"] });
    const noCategories = await enable(owner.auth, bare.id).expect(400);
    expect(noCategories.body.error).toBe("validation_error");
    expect(noCategories.body.message).toMatch(/sourceCategories/);

    for (const body of [{}, { listId: "abc" }, { listId: 1.5 }, { listId: null }]) {
      const res = await t
        .request()
        .post("/api/v1/ai/auto-refine/enable")
        .set(owner.auth)
        .send(body)
        .expect(400);
      expect(res.body.error).toBe("validation_error");
    }
    await t.request().get("/api/v1/ai/auto-refine/status?listId=abc").set(owner.auth).expect(400);
    await t.request().get("/api/v1/ai/auto-refine/status?list=1").set(owner.auth).expect(400);
    expect(await listOf(owner.auth, positive.id)).toMatchObject({
      autoRefineEnabled: false,
      refinementStatus: null,
    });
    expect(await listOf(owner.auth, bare.id)).toMatchObject({
      autoRefineEnabled: false,
      refinementStatus: null,
    });
  });

  it("counts enable toward the AI limit of 5 per minute", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    for (let i = 0; i < 5; i += 1) await enable(auth, 999_999).expect(400);
    const limited = await enable(auth, 999_999).expect(429);
    expect(limited.body.error).toBe("Rate limit exceeded");
    // Disable and status have their own limit of 60 per minute.
    await disable(auth, 999_999).expect(400);
  });

  it("needs a valid, unrevoked key of an account with a paid plan", async () => {
    await expectKeyAndPlanRequired(t, [
      { method: "post", path: "/api/v1/ai/auto-refine/enable", body: { listId: 1 } },
      { method: "post", path: "/api/v1/ai/auto-refine/disable", body: { listId: 1 } },
      { method: "get", path: "/api/v1/ai/auto-refine/status" },
    ]);
  });
});
