import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { run, type Runner } from "graphile-worker";
import { sql } from "kysely";
import { pino } from "pino";
import type supertest from "supertest";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ChatCompletionsModel } from "../src/ai/chat-model.js";
import { AiEngine } from "../src/ai/engine.js";
import type { AiServices } from "../src/ai/services.js";
import { aiTaskList } from "../src/ai/tasks.js";
import { jobTaskList } from "../src/jobs/index.js";
import { workerLogger } from "../src/jobs/runtime.js";
import { importLeadRecords } from "../src/leads/import/importer.js";
import { generateLeads } from "../src/leads/import/generate.js";
import { Outbound } from "../src/outbound/index.js";
import { useTestApp } from "./helpers/app.js";
import { ChatCompletionsServer } from "./helpers/chat-completions-server.js";
import { buildAccount, buildKey } from "./helpers/factories.js";
import { expectKeyAndPlanRequired } from "./helpers/lead-records-factories.js";

// The AI helpers over HTTP: category suggestions under the job protocol (built-in back end, the
// model back end against a local Chat Completions server, the website read through the outbound
// guard), keyword generation in the background, and the status list.

const t = useTestApp();
const chat = new ChatCompletionsServer();
const silent = pino({ level: "silent" });
/** The services the test worker runs the AI jobs on; tests swap the engine or the outbound guard. */
const ai = {} as AiServices;
let builtIn: AiEngine;
let runner: Runner;
let site: Server;
let siteRequests = 0;
let sitePage = "<html><head><title>Acme</title></head><body><p>Hello</p></body></html>";
let siteStatus = 200;

beforeAll(async () => {
  await chat.start();
  await importLeadRecords(t.ctx.db, generateLeads(2_000, 5));
  builtIn = new AiEngine(t.ctx.db, null);
  ai.engine = builtIn;
  ai.outbound = t.ctx.outbound;
  await t.ctx.jobs.ensureQueue();
  runner = await run({
    pgPool: t.ctx.pool,
    concurrency: 8,
    noHandleSignals: true,
    pollInterval: 200,
    taskList: {
      ...jobTaskList({
        db: t.ctx.db,
        storage: t.ctx.storage,
        logger: silent,
        signingSecret: t.ctx.signingSecret,
        services: { ai },
      }),
      ...aiTaskList({
        db: t.ctx.db,
        logger: silent,
        get engine() {
          return ai.engine;
        },
      }),
    },
    logger: workerLogger(silent),
  });
  site = createServer((_req, res) => {
    siteRequests += 1;
    res.writeHead(siteStatus, { "content-type": "text/html; charset=utf-8" });
    res.end(sitePage);
  });
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
});

afterAll(async () => {
  await runner?.stop();
  await chat.stop();
  await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()));
});

afterEach(() => {
  ai.engine = builtIn;
  ai.outbound = t.ctx.outbound;
  chat.reset();
});

const siteUrl = () => `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;

const plumbingBusiness = {
  companyName: "PipeRight Supply",
  companyDescription: "We distribute pipes, water heaters and drain tools to plumbing contractors.",
  productService: "Wholesale plumbing supplies for plumbers and drain cleaning companies",
};

function modelEngine(options: { timeoutMs?: number } = {}): AiEngine {
  const model = new ChatCompletionsModel(
    {
      baseUrl: chat.baseUrl,
      apiKey: "sk-test",
      model: "test-model",
      timeoutMs: options.timeoutMs ?? 2_000,
      maxTokens: 200,
    },
    { maxRetries: 0, invalidOutputRetries: 0 },
  );
  return new AiEngine(t.ctx.db, model);
}

function suggest(auth: { Authorization: string }, body: object): supertest.Test {
  return t.request().post("/api/v1/ai/suggest-categories").set(auth).send(body);
}

async function targetCategoriesOf(auth: { Authorization: string }): Promise<string[]> {
  const me = await t.request().get("/api/v1/me").set(auth).expect(200);
  return me.body.data.targetCategories as string[];
}

async function jobsOf(accountId: number): Promise<number> {
  const rows = await t.ctx.db.selectFrom("jobs").select("id").where("account_id", "=", accountId).execute();
  return rows.length;
}

describe("POST /ai/suggest-categories", () => {
  it("suggests 4-12 categories of the lead database and saves them as the target categories", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await suggest(auth, plumbingBusiness).expect(200);
    const { categories, websiteAnalysisFailed } = res.body.data as {
      categories: string[];
      websiteAnalysisFailed: boolean;
    };
    expect(categories.length).toBeGreaterThanOrEqual(4);
    expect(categories.length).toBeLessThanOrEqual(12);
    expect(categories.slice(0, 3)).toEqual(expect.arrayContaining(["Plumbing", "Plumber"]));
    expect(websiteAnalysisFailed).toBe(false);
    expect(res.headers["x-svc-job-id"]).toEqual(expect.any(String));
    expect(res.headers["x-ratelimit-limit"]).toBe("5");
    expect(await targetCategoriesOf(auth)).toEqual(categories);
  });

  it("never suggests an excluded category (compared ignoring case)", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await suggest(auth, {
      ...plumbingBusiness,
      excludeCategories: ["plumbing", " Drain Cleaning "],
    }).expect(200);
    expect(res.body.data.categories).toContain("Plumber");
    expect(res.body.data.categories).not.toContain("Plumbing");
    expect(res.body.data.categories).not.toContain("Drain Cleaning");
  });

  it("reads the website's home page through the outbound guard", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    sitePage = `<html><head><title>Acme Marketing</title>
      <meta name="description" content="Marketing for roofing contractors"></head>
      <body><h1>Leads for roofers</h1><p>We find storm damage repair jobs for roofing companies.</p>
      <script>var plumbing = "not text";</script></body></html>`;
    siteStatus = 200;
    const res = await suggest(auth, {
      companyName: "Acme Marketing",
      companyDescription: "We help local businesses get customers.",
      productService: "Online marketing",
      companyWebsite: siteUrl(),
    }).expect(200);
    expect(res.body.data.websiteAnalysisFailed).toBe(false);
    expect(res.body.data.categories).toEqual(expect.arrayContaining(["Roofing", "Storm Damage Repair"]));
  });

  it("still answers when the website cannot be read, with websiteAnalysisFailed", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    siteStatus = 404;
    const res = await suggest(auth, { ...plumbingBusiness, companyWebsite: siteUrl() }).expect(200);
    siteStatus = 200;
    expect(res.body.data.websiteAnalysisFailed).toBe(true);
    expect(res.body.data.categories).toContain("Plumbing");
  });

  it("refuses to read a website at a private address (the guard without OUTBOUND_ALLOW_PRIVATE)", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const guarded = new Outbound({ allowPrivate: false });
    ai.outbound = guarded;
    const before = siteRequests;
    try {
      for (const companyWebsite of [
        siteUrl(),
        `localhost:${(site.address() as AddressInfo).port}`,
        "http://169.254.169.254/",
      ]) {
        const res = await suggest(auth, {
          ...plumbingBusiness,
          companyName: `PipeRight ${companyWebsite}`,
          companyWebsite,
        }).expect(200);
        expect(res.body.data.websiteAnalysisFailed, companyWebsite).toBe(true);
        expect(res.body.data.categories).toContain("Plumbing");
      }
    } finally {
      guarded.close();
    }
    expect(siteRequests).toBe(before);
  });

  it("runs as a job: respond-async answers 202 and the job answers the same", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const accepted = await suggest(auth, plumbingBusiness).set("Prefer", "respond-async").expect(202);
    expect(accepted.body).toMatchObject({ status: "running", kind: "ai_suggest_categories" });
    // Another account cannot read it.
    const stranger = await buildAccount(t.ctx.db);
    const hidden = await t
      .request()
      .get(`/api/v1/jobs/${accepted.body.jobId}`)
      .set(stranger.auth)
      .expect(404);
    expect(hidden.body.error).toBe("job_not_found");
    let res: supertest.Response | undefined;
    for (let i = 0; i < 100; i += 1) {
      res = await t.request().get(`/api/v1/jobs/${accepted.body.jobId}`).set(auth);
      if (res.status !== 202) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(res?.status).toBe(200);
    expect(res?.body.data.categories).toContain("Plumbing");
    expect(res?.headers["x-svc-job-status"]).toBe("completed");
  });

  it("runs at most 3 suggestions per account at once (429 job_capacity_busy)", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    ai.engine = modelEngine({ timeoutMs: 20_000 });
    chat.respond = () => ({ hang: true });
    for (let i = 0; i < 3; i += 1) {
      await suggest(auth, { ...plumbingBusiness, companyName: `Busy ${i}` })
        .set("Prefer", "respond-async")
        .expect(202);
    }
    const busy = await suggest(auth, { ...plumbingBusiness, companyName: "Busy 3" })
      .set("Prefer", "respond-async")
      .expect(429);
    expect(busy.body.error).toBe("job_capacity_busy");
    expect(busy.headers["retry-after"]).toBe("30");
    expect(await jobsOf(accountId)).toBe(3);
    // Another account is not held up.
    await suggest(other.auth, plumbingBusiness).set("Prefer", "respond-async").expect(202);
  });

  it("answers 503 service_unavailable when the model fails, and changes nothing", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    await suggest(auth, plumbingBusiness).expect(200);
    const saved = await targetCategoriesOf(auth);
    ai.engine = modelEngine();
    chat.respond = () => ({ status: 500 });
    const res = await suggest(auth, { ...plumbingBusiness, companyName: "Other" }).expect(503);
    expect(res.body.error).toBe("service_unavailable");
    expect(res.headers["retry-after"]).toBe("30");
    expect(await targetCategoriesOf(auth)).toEqual(saved);

    chat.respond = () => ({ text: "no JSON here" });
    const invalid = await suggest(auth, { ...plumbingBusiness, companyName: "Third" }).expect(503);
    expect(invalid.body.error).toBe("service_unavailable");
  });

  it("uses the model's choice among the lead database's categories when a model is configured", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    ai.engine = modelEngine();
    chat.respond = () => ({
      json: { categories: ["Drain Cleaning", "Plumber", "Plumbing", "Home Services", "Invented"] },
    });
    const res = await suggest(auth, plumbingBusiness).expect(200);
    expect(res.body.data.categories).toEqual(["Drain Cleaning", "Plumber", "Plumbing", "Home Services"]);
    expect(chat.calls).toHaveLength(1);
  });

  it("refuses bad input with 400 validation_error and queues nothing", async () => {
    const { accountId } = await buildAccount(t.ctx.db);
    const bad: object[] = [
      { companyName: "Acme", companyDescription: "Pipes" },
      { ...plumbingBusiness, companyName: "   " },
      { ...plumbingBusiness, companyName: "x".repeat(2_001) },
      { ...plumbingBusiness, productService: 42 },
      { ...plumbingBusiness, companyWebsite: "x".repeat(2_001) },
      { ...plumbingBusiness, excludeCategories: Array.from({ length: 51 }, (_, i) => `c${i}`) },
      { ...plumbingBusiness, excludeCategories: "Plumbing" },
    ];
    for (const body of bad) {
      // 5 AI requests per minute per key: a key per request keeps the test within the limit.
      const key = await buildKey(t.ctx.db, accountId);
      const res = await suggest(key.auth, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.error).toBe("validation_error");
    }
    expect(await jobsOf(accountId)).toBe(0);
  });

  it("is limited to 5 requests per minute per key", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    for (let i = 0; i < 5; i += 1) await suggest(auth, {}).expect(400);
    const limited = await suggest(auth, plumbingBusiness).expect(429);
    expect(limited.body.error).toBe("Rate limit exceeded");
    expect(limited.headers["x-ratelimit-limit"]).toBe("5");
  });
});

describe("keyword generation", () => {
  async function waitForGeneration(auth: { Authorization: string }): Promise<Record<string, unknown>> {
    for (let i = 0; i < 100; i += 1) {
      const res = await t.request().get("/api/v1/ai/keyword-status").set(auth).expect(200);
      const latest = res.body.data.jobs[0] as Record<string, unknown> | undefined;
      if (latest && (latest.status === "completed" || latest.status === "failed")) return latest;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error("the keyword generation did not finish");
  }

  async function listsOf(auth: { Authorization: string }): Promise<Record<string, unknown>[]> {
    const res = await t.request().get("/api/v1/keyword-lists").set(auth).expect(200);
    return res.body.data as Record<string, unknown>[];
  }

  it("answers 400 bad_request without target categories", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t.request().post("/api/v1/ai/generate-keywords").set(auth).expect(400);
    expect(res.body.error).toBe("bad_request");
    expect((await t.request().get("/api/v1/ai/keyword-status").set(auth).expect(200)).body.data).toEqual({
      hasJobs: false,
      jobs: [],
    });
  });

  it("follows PATCH /me and suggestions, and replaces the account's keyword lists when done", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    await t.request().patch("/api/v1/me").set(auth).send({ companyName: "PipeRight Supply" }).expect(200);
    await t
      .request()
      .post("/api/v1/keyword-lists")
      .set(auth)
      .send({ name: "Old", type: "positive", keywords: ["old"] })
      .expect(201);
    const suggested = (await suggest(auth, plumbingBusiness).expect(200)).body.data.categories as string[];

    const started = await t.request().post("/api/v1/ai/generate-keywords").set(auth).expect(202);
    expect(started.body.data).toEqual({ message: expect.any(String), status: "pending" });
    const again = await t.request().post("/api/v1/ai/generate-keywords").set(auth).expect(202);
    expect(["pending", "running", "completed"]).toContain(again.body.data.status);

    const generation = await waitForGeneration(auth);
    expect(generation).toMatchObject({ status: "completed", error: null, sourceCategories: suggested });
    const lists = await listsOf(auth);
    expect(lists.map((l) => l.name)).not.toContain("Old");
    // The generation's copies hold each list's content (the lists add their auto-refine state).
    expect(
      [...lists]
        .sort((a, b) => (a.id as number) - (b.id as number))
        .map(({ id, name, type, keywords, sourceCategories, createdAt }) => ({
          id,
          name,
          type,
          keywords,
          sourceCategories,
          createdAt,
        })),
    ).toEqual(generation.keywordLists);
    for (const category of suggested) {
      const own = lists.find(
        (l) => l.type === "positive" && (l.sourceCategories as string[]).includes(category),
      );
      expect(own?.keywords, category).toContain(category.toLowerCase());
    }
    expect(lists.some((l) => l.type === "negative")).toBe(true);
    const rows = await t.ctx.db
      .selectFrom("ai_keyword_generations")
      .select("id")
      .where("account_id", "=", accountId)
      .execute();
    // The second request during the first generation started none; made once the first had
    // finished (the fake model answers at once), it started the next.
    const startedAnother = (again.body.data.message as string).startsWith("Keyword generation started");
    expect(rows.length).toBe(startedAnother ? 2 : 1);
  });

  it("replaces the lists in one step: a reader sees the old lists or the new ones, never a mix", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    await t.ctx.db
      .updateTable("accounts")
      .set({ target_categories: ["Plumbing", "Roofing", "Bakery"] })
      .where("id", "=", accountId)
      .execute();
    for (const name of ["A", "B", "C"]) {
      await t
        .request()
        .post("/api/v1/keyword-lists")
        .set(auth)
        .send({ name, type: "positive", keywords: [name] })
        .expect(201);
    }
    const seen = new Set<string>();
    let reading = true;
    const reader = (async () => {
      while (reading) {
        const names = (
          await t.ctx.db
            .selectFrom("keyword_lists")
            .select("name")
            .where("account_id", "=", accountId)
            .execute()
        )
          .map((r) => r.name)
          .sort();
        seen.add(names.join("|"));
      }
    })();
    await t.request().post("/api/v1/ai/generate-keywords").set(auth).expect(202);
    await waitForGeneration(auth);
    reading = false;
    await reader;
    const after = (await listsOf(auth))
      .map((l) => l.name as string)
      .sort()
      .join("|");
    expect([...seen].every((s) => s === "A|B|C" || s === after)).toBe(true);
    expect(after).not.toBe("A|B|C");
  });

  it("starts one generation for concurrent requests of an account", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    await t.ctx.db
      .updateTable("accounts")
      .set({ target_categories: ["Roofing"] })
      .where("id", "=", accountId)
      .execute();
    ai.engine = modelEngine({ timeoutMs: 20_000 });
    chat.respond = () => ({ hang: true }); // the first generation stays running
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => t.request().post("/api/v1/ai/generate-keywords").set(auth)),
    );
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202]);
    expect(answers.filter((a) => a.body.data.message.startsWith("Keyword generation started"))).toHaveLength(
      1,
    );
    const rows = await t.ctx.db
      .selectFrom("ai_keyword_generations")
      .select("status")
      .where("account_id", "=", accountId)
      .execute();
    expect(rows).toHaveLength(1);
    const status = await t.request().get("/api/v1/ai/keyword-status").set(auth).expect(200);
    const generation = expect.objectContaining({
      status: expect.stringMatching(/^(pending|running)$/),
      sourceCategories: ["Roofing"],
    });
    expect(status.body.data).toEqual({ hasJobs: true, jobs: [generation] });
    // The shape before 2026-11-27, kept for its clients: the bare array (docs/ai.md).
    const list = await t.request().get("/api/v1/ai/keyword-status?shape=list").set(auth).expect(200);
    expect(list.body.data).toEqual([generation]);
    expect(list.body.data[0].id).toBe(status.body.data.jobs[0].id);
  });

  it("ends failed with the lists unchanged when the model fails", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    await t.ctx.db
      .updateTable("accounts")
      .set({ target_categories: ["Plumbing"] })
      .where("id", "=", accountId)
      .execute();
    await t
      .request()
      .post("/api/v1/keyword-lists")
      .set(auth)
      .send({ name: "Kept", type: "positive", keywords: ["kept"] })
      .expect(201);
    ai.engine = modelEngine();
    chat.respond = () => ({ status: 500 });
    await t.request().post("/api/v1/ai/generate-keywords").set(auth).expect(202);
    const generation = await waitForGeneration(auth);
    expect(generation).toMatchObject({
      status: "failed",
      keywordLists: [],
      error: expect.stringContaining("HTTP 500"),
    });
    expect((await listsOf(auth)).map((l) => l.name)).toEqual(["Kept"]);
  });

  it("lists only the account's own generations, and leaves other accounts' lists alone", async () => {
    const owner = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    await t.ctx.db
      .updateTable("accounts")
      .set({ target_categories: ["Bakery"] })
      .where("id", "=", owner.accountId)
      .execute();
    await t
      .request()
      .post("/api/v1/keyword-lists")
      .set(other.auth)
      .send({ name: "Mine", type: "negative", keywords: ["x"] })
      .expect(201);
    await t.request().post("/api/v1/ai/generate-keywords").set(owner.auth).expect(202);
    await waitForGeneration(owner.auth);
    expect(
      (await t.request().get("/api/v1/ai/keyword-status").set(other.auth).expect(200)).body.data,
    ).toEqual({ hasJobs: false, jobs: [] });
    expect((await listsOf(other.auth)).map((l) => l.name)).toEqual(["Mine"]);
  });

  it("counts generate-keywords toward the AI limit, keyword-status only toward the general limit", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    for (let i = 0; i < 5; i += 1)
      await t.request().post("/api/v1/ai/generate-keywords").set(auth).expect(400);
    const limited = await t.request().post("/api/v1/ai/generate-keywords").set(auth).expect(429);
    expect(limited.body.error).toBe("Rate limit exceeded");
    for (let i = 0; i < 10; i += 1) {
      const res = await t.request().get("/api/v1/ai/keyword-status").set(auth).expect(200);
      expect(res.headers["x-ratelimit-limit"]).toBe("600");
    }
  });

  it("refuses unknown query parameters", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t.request().get("/api/v1/ai/keyword-status?limit=5").set(auth).expect(400);
    expect(res.body.error).toBe("validation_error");
    const shape = await t.request().get("/api/v1/ai/keyword-status?shape=array").set(auth).expect(400);
    expect(shape.body.error).toBe("validation_error");
  });
});

describe("background classification (task ai__classify_leads)", () => {
  it("gives leads without aiCategoryEstimation 1 to 3 categories of the lead database", async () => {
    const rows = await t.ctx.db
      .selectFrom("leads")
      .select("id")
      .where("category", "=", "Bakery")
      .where("description", "is not", null)
      .orderBy("id")
      .limit(20)
      .execute();
    const ids = rows.map((r) => r.id);
    await t.ctx.db
      .updateTable("leads")
      .set({ ai_category_estimation: null })
      .where("id", "in", ids)
      .execute();
    await t.ctx.db.updateTable("ai_classification_state").set({ last_lead_id: 0 }).execute();
    await sql`select graphile_worker.add_job('ai__classify_leads', '{}'::json)`.execute(t.ctx.db);
    let classified: { id: number; ai_category_estimation: string[] | null }[] = [];
    for (let i = 0; i < 100; i += 1) {
      classified = await t.ctx.db
        .selectFrom("leads")
        .select(["id", "ai_category_estimation"])
        .where("id", "in", ids)
        .execute();
      if (classified.every((lead) => lead.ai_category_estimation !== null)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    for (const lead of classified) {
      expect(lead.ai_category_estimation?.length, `lead ${lead.id}`).toBeGreaterThanOrEqual(1);
      expect(lead.ai_category_estimation?.length).toBeLessThanOrEqual(3);
      expect(lead.ai_category_estimation).toContain("Bakery");
    }
  });
});

describe("keys and plans", () => {
  it("needs a valid, unrevoked key of an account with a paid plan", async () => {
    await expectKeyAndPlanRequired(t, [
      { method: "post", path: "/api/v1/ai/suggest-categories", body: plumbingBusiness },
      { method: "post", path: "/api/v1/ai/generate-keywords" },
      { method: "get", path: "/api/v1/ai/keyword-status" },
    ]);
  });
});
