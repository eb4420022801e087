import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ensureCatalog, rankCategories } from "../src/ai/catalog.js";
import { ChatCompletionsModel } from "../src/ai/chat-model.js";
import { classifyNextBatch, classifyPendingLeads } from "../src/ai/classification.js";
import { AiEngine } from "../src/ai/engine.js";
import { AiUnavailableError } from "../src/ai/errors.js";
import type { GeneratedList } from "../src/ai/keywords.js";
import { loadConfig } from "../src/config.js";
import type { Db } from "../src/db/database.js";
import { importLeadRecords } from "../src/leads/import/importer.js";
import { generateLeads } from "../src/leads/import/generate.js";
import { TRADES } from "../src/leads/import/generate-data.js";
import { parseSearchFilters } from "../src/leads/search/filters.js";
import { searchCondition } from "../src/leads/search/query.js";
import { ChatCompletionsServer, userInput } from "./helpers/chat-completions-server.js";
import { createTestDatabase, type TestDatabase } from "./helpers/db.js";

// The AI engine on both back ends: the built-in one on generated leads, the model one against a
// local server speaking the Chat Completions API.

let database: TestDatabase;
let db: Db;
const server = new ChatCompletionsServer();
const LEAD_COUNT = 3_000;

beforeAll(async () => {
  database = await createTestDatabase();
  db = database.db;
  await importLeadRecords(db, generateLeads(LEAD_COUNT, 11));
  await server.start();
});

afterAll(async () => {
  await server.stop();
  await database?.destroy();
});

beforeEach(() => server.reset());

const builtIn = () => new AiEngine(db, null);

function modelEngine(options: { timeoutMs?: number; maxRetries?: number } = {}): AiEngine {
  const model = new ChatCompletionsModel(
    {
      baseUrl: server.baseUrl,
      apiKey: "sk-test-secret",
      model: "test-model",
      timeoutMs: options.timeoutMs ?? 2_000,
      maxTokens: 300,
    },
    { maxRetries: options.maxRetries ?? 1 },
  );
  return new AiEngine(db, model);
}

const plumbingCompany = {
  companyName: "PipeRight Supply",
  companyDescription: "We distribute pipes, fittings, water heaters and drain tools to plumbing contractors.",
  productService: "Wholesale plumbing supplies for plumbers and drain cleaning companies",
  websiteText: null,
};

/** Category names carried by the lead database (`category` or `aiCategoryEstimation`), lower-cased. */
async function databaseCategories(): Promise<Set<string>> {
  const result = await sql<{ name: string }>`
    select distinct lower(btrim(n)) as name from (
      select category as n from leads where category is not null
      union all select unnest(ai_category_estimation) from leads
    ) as names`.execute(db);
  return new Set(result.rows.map((r) => r.name));
}

/** Ids of the leads a search with these keywords finds (the service's own search condition). */
async function searchIds(positiveKeywords: string[], negativeKeywords: string[]): Promise<Set<number>> {
  const filters = parseSearchFilters({ positiveKeywords, negativeKeywords }, "body");
  const rows = await db.selectFrom("leads").select("id").where(searchCondition(filters)).execute();
  return new Set(rows.map((r) => r.id));
}

async function leadIdsWithAiCategory(name: string): Promise<number[]> {
  const rows = await db
    .selectFrom("leads")
    .select("id")
    .where(sql<boolean>`${name}::text = any(ai_category_estimation)`)
    .execute();
  return rows.map((r) => r.id);
}

describe("the category catalogue", () => {
  it("holds every category name of the lead database once, in its most used spelling", async () => {
    await ensureCatalog(db, 0);
    const names = (await db.selectFrom("ai_categories").select(["name", "lead_count"]).execute()).map(
      (r) => r.name,
    );
    expect(new Set(names.map((n) => n.toLowerCase()))).toEqual(await databaseCategories());
    expect(names).toContain("Plumbing");
    expect(names).toContain("Plumber");
  });

  it("is rebuilt when older than its age limit, and not before", async () => {
    const { id } = await db
      .insertInto("leads")
      .values({
        external_id: "catalog-new",
        company_name: "Zephyr Kite Works",
        category: "Kite Maker",
        updated_at: new Date(),
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    await ensureCatalog(db); // fresh: kept
    expect(
      await db.selectFrom("ai_categories").select("name").where("name", "=", "Kite Maker").execute(),
    ).toEqual([]);
    await ensureCatalog(db, 0);
    expect(
      await db.selectFrom("ai_categories").select("name").where("name", "=", "Kite Maker").execute(),
    ).toEqual([{ name: "Kite Maker" }]);
    await db.deleteFrom("leads").where("id", "=", id).execute();
    await ensureCatalog(db, 0);
  });

  it("ranks names by full-text and trigram similarity, leaving excluded names out", async () => {
    const ranked = await rankCategories(db, "emergency plumbing repair, clogged drains", {
      exclude: ["drain cleaning"],
      limit: 5,
    });
    expect(ranked[0]?.name).toBe("Plumbing");
    // "Plumber" shares no stemmed word with the text; the trigram similarity ranks it high.
    expect(ranked.slice(0, 3).map((c) => c.name)).toContain("Plumber");
    expect(ranked.map((c) => c.name)).not.toContain("Drain Cleaning");
  });
});

describe("built-in back end", () => {
  it("suggests 4-12 categories of the lead database for a plumbing company, without the excluded ones", async () => {
    const names = await builtIn().suggestCategories(plumbingCompany, ["Drain Cleaning", "home services"]);
    expect(names.length).toBeGreaterThanOrEqual(4);
    expect(names.length).toBeLessThanOrEqual(12);
    expect(names.slice(0, 3)).toEqual(expect.arrayContaining(["Plumbing", "Plumber"]));
    expect(names).not.toContain("Drain Cleaning");
    expect(names).not.toContain("Home Services");
    const known = await databaseCategories();
    for (const name of names) expect(known.has(name.toLowerCase()), name).toBe(true);
    expect(new Set(names).size).toBe(names.length);
  });

  it("suggests from the website's text too", async () => {
    const names = await builtIn().suggestCategories(
      {
        companyName: "Acme Marketing",
        companyDescription: "We help local businesses get customers.",
        productService: "Online marketing",
        websiteText: "Marketing for roofing contractors and storm damage repair companies",
      },
      [],
    );
    expect(names).toEqual(expect.arrayContaining(["Roofing", "Storm Damage Repair"]));
  });

  it("writes keywords that find the leads of each target category", async () => {
    const targets = ["Plumbing", "Roofing", "Drain Cleaning", "Dentistry"];
    const lists = await builtIn().generateKeywords({
      targetCategories: targets,
      targetLocations: ["TX"],
      companyName: "PipeRight Supply",
      companyWebsite: null,
    });
    const negative = lists.filter((l) => l.type === "negative").flatMap((l) => l.keywords);
    expect(negative.length).toBeGreaterThan(0);
    for (const category of targets) {
      const positive = listsFor(lists, category);
      expect(positive.length, category).toBeGreaterThan(0);
      const found = await searchIds(positive, negative);
      const expected = await leadIdsWithAiCategory(category);
      expect(expected.length, category).toBeGreaterThan(10);
      const missed = expected.filter((id) => !found.has(id));
      expect(missed, category).toEqual([]);
    }
    // The stem finds businesses not yet classified, by name or web address.
    expect(listsFor(lists, "Plumbing")).toContain("plumb");
    expect(listsFor(lists, "Dentistry")).toContain("dentistr");
  });

  it("keeps the keywords of a category to that category's businesses", async () => {
    const lists = await builtIn().generateKeywords({
      targetCategories: ["Plumbing"],
      targetLocations: [],
      companyName: null,
      companyWebsite: null,
    });
    const found = await searchIds(listsFor(lists, "Plumbing"), []);
    const plumbers = new Set(
      (await db.selectFrom("leads").select("id").where("external_id", "like", "gen-11-%").execute()).map(
        (r) => r.id,
      ),
    );
    const trade = TRADES.find((t) => t.category === "Plumber")!;
    const rows = await db
      .selectFrom("leads")
      .select(["id", "category", "company_name", "ai_category_estimation"])
      .where("id", "in", [...found])
      .execute();
    const ofTrade = rows.filter(
      (r) =>
        r.category === "Plumber" ||
        trade.names.some((n) => r.company_name?.includes(n)) ||
        (r.ai_category_estimation ?? []).some((c) => trade.ai.includes(c)),
    );
    expect(plumbers.size).toBe(LEAD_COUNT);
    expect(ofTrade.length / rows.length).toBeGreaterThan(0.95);
  });

  it("classifies leads without categories from their name, category and description", async () => {
    const rows = await db
      .selectFrom("leads")
      .select(["id", "category"])
      .where("category", "in", ["Plumber", "Roofing Contractor"])
      .where("description", "is not", null)
      .orderBy("id")
      .limit(40)
      .execute();
    const ids = rows.map((r) => r.id);
    await db.updateTable("leads").set({ ai_category_estimation: null }).where("id", "in", ids).execute();
    const { id: emptyLead } = await db
      .insertInto("leads")
      .values({ external_id: "no-text", company_name: "Zzq Qqz", updated_at: new Date() })
      .returning("id")
      .executeTakeFirstOrThrow();
    await db.updateTable("ai_classification_state").set({ last_lead_id: 0 }).execute();

    const done = await classifyPendingLeads(db, builtIn(), { budgetMs: 60_000, pauseMs: 0 });
    expect(done.classified).toBeGreaterThanOrEqual(ids.length);

    const after = await db
      .selectFrom("leads")
      .select(["id", "category", "ai_category_estimation"])
      .where("id", "in", ids)
      .execute();
    const known = await databaseCategories();
    for (const lead of after) {
      const names = lead.ai_category_estimation ?? [];
      expect(names.length, `lead ${lead.id}`).toBeGreaterThanOrEqual(1);
      expect(names.length).toBeLessThanOrEqual(3);
      for (const name of names) expect(known.has(name.toLowerCase())).toBe(true);
      const stem = lead.category === "Plumber" ? "plumb" : "roof";
      expect(
        names.some((n) => n.toLowerCase().includes(stem)),
        `${lead.category}: ${names.join(", ")}`,
      ).toBe(true);
    }
    // Nothing fits a lead without words: it is remembered, not classified, and not read again.
    const empty = await db
      .selectFrom("leads")
      .select("ai_category_estimation")
      .where("id", "=", emptyLead)
      .executeTakeFirstOrThrow();
    expect(empty.ai_category_estimation).toBeNull();
    expect(
      await db
        .selectFrom("ai_unclassified_leads")
        .select("lead_id")
        .where("lead_id", "=", emptyLead)
        .execute(),
    ).toHaveLength(1);
    await db.updateTable("ai_classification_state").set({ last_lead_id: 0 }).execute();
    expect(await classifyNextBatch(db, builtIn())).toEqual({ examined: 0, classified: 0 });
  });
});

function listsFor(lists: GeneratedList[], category: string): string[] {
  return lists
    .filter((l) => l.type === "positive" && l.sourceCategories.includes(category))
    .flatMap((l) => l.keywords);
}

describe("model back end (a local Chat Completions server)", () => {
  it("asks for strict JSON of a schema, with the token cap and the key, and keeps the answer to known names", async () => {
    server.respond = (call) => {
      const input = userInput(call) as { candidates: string[] };
      expect(input.candidates).toContain("Plumbing");
      return { json: { categories: ["Plumber", "Made Up Category", "plumbing", "Plumber"] } };
    };
    const names = await modelEngine().suggestCategories(plumbingCompany, ["Drain Cleaning"]);
    expect(names.slice(0, 2)).toEqual(["Plumber", "Plumbing"]);
    expect(names).toHaveLength(4); // topped up from the ranking
    expect(names).not.toContain("Made Up Category");
    expect(names).not.toContain("Drain Cleaning");
    expect(server.calls).toHaveLength(1);
    const call = server.calls[0]!;
    expect(call.body.model).toBe("test-model");
    expect(call.body.max_tokens).toBe(300);
    expect(call.body.response_format).toMatchObject({
      type: "json_schema",
      json_schema: {
        name: "category_choice",
        strict: true,
        schema: { type: "object", required: ["categories"] },
      },
    });
    expect(call.headers.authorization).toBe("Bearer sk-test-secret");
    expect((userInput(call) as { candidates: string[] }).candidates).not.toContain("Drain Cleaning");
  });

  it("asks again once when the answer is not JSON of the schema, then gives up", async () => {
    server.reply(
      { text: "Sure! Plumbing, Plumber" },
      { json: { categories: ["Plumbing", "Plumber", "Drain Cleaning", "Home Services"] } },
    );
    expect(await modelEngine().suggestCategories(plumbingCompany, [])).toEqual([
      "Plumbing",
      "Plumber",
      "Drain Cleaning",
      expect.any(String),
    ]);
    expect(server.calls).toHaveLength(2);

    server.reset();
    server.reply({ text: "not json" }, { json: { categories: "Plumbing" } });
    const failure = await modelEngine()
      .suggestCategories(plumbingCompany, [])
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(AiUnavailableError);
    expect((failure as AiUnavailableError).failure).toBe("invalid_output");
    expect(server.calls).toHaveLength(2);
  });

  it("retries after 429 with backoff and succeeds", async () => {
    server.reply(
      { status: 429, retryAfterSeconds: 0 },
      { json: { categories: ["Plumbing", "Plumber", "Drain Cleaning", "Home Services"] } },
    );
    expect(await modelEngine().suggestCategories(plumbingCompany, [])).toHaveLength(4);
    expect(server.calls).toHaveLength(2);
  });

  it("retries 5xx, then reports the model unavailable", async () => {
    server.respond = () => ({ status: 503 });
    const failure = await modelEngine({ maxRetries: 2 })
      .suggestCategories(plumbingCompany, [])
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(AiUnavailableError);
    expect((failure as AiUnavailableError).failure).toBe("error_status");
    expect(server.calls).toHaveLength(3);
    expect((failure as Error).message).not.toContain("sk-test-secret");
  });

  it("times out a call that gets no answer (each retry too)", async () => {
    server.respond = () => ({ hang: true });
    const started = Date.now();
    const failure = await modelEngine({ timeoutMs: 300, maxRetries: 1 })
      .suggestCategories(plumbingCompany, [])
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(AiUnavailableError);
    expect((failure as AiUnavailableError).failure).toBe("timeout");
    expect(server.calls).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("writes keyword lists the way the model proposes them, made safe, each category keeping its own name", async () => {
    server.reply({
      json: {
        lists: [
          {
            name: "Plumbing",
            type: "positive",
            keywords: [" Plumb ", "PLUMB", "pipe\u0000", "x", "drain"],
            sourceCategories: ["plumbing"],
          },
          { name: "Avoid", type: "negative", keywords: ["supply house"], sourceCategories: ["Unknown"] },
          { name: "Empty", type: "positive", keywords: [" "], sourceCategories: ["Roofing"] },
        ],
      },
    });
    const lists = await modelEngine().generateKeywords({
      targetCategories: ["Plumbing", "Roofing"],
      targetLocations: ["Austin, TX"],
      companyName: "PipeRight",
      companyWebsite: "https://piperight.example",
    });
    expect(lists).toEqual([
      {
        name: "Plumbing",
        type: "positive",
        keywords: ["plumbing", "plumb", "drain"],
        sourceCategories: ["Plumbing"],
      },
      {
        name: "Avoid",
        type: "negative",
        keywords: ["supply house"],
        sourceCategories: ["Plumbing", "Roofing"],
      },
      { name: "Roofing keywords", type: "positive", keywords: ["roofing"], sourceCategories: ["Roofing"] },
    ]);
    const input = userInput(server.calls[0]!) as Record<string, unknown>;
    expect(input).toEqual({
      targetCategories: ["Plumbing", "Roofing"],
      targetLocations: ["Austin, TX"],
      profile: { companyName: "PipeRight", companyWebsite: "https://piperight.example" },
    });
  });

  it("classifies a batch of leads, keeping each to its candidates", async () => {
    const leads = await db
      .selectFrom("leads")
      .select(["id", "company_name", "category", "description"])
      .where("category", "=", "Plumber")
      .orderBy("id")
      .limit(3)
      .execute();
    server.respond = (call) => {
      const items = userInput(call) as { id: number; candidates: string[] }[];
      return {
        json: {
          leads: items.map((item, i) => ({
            id: item.id,
            categories:
              i === 2 ? ["Nothing Real"] : [item.candidates.find((c) => c.includes("Plumb"))!, "Invented"],
          })),
        },
      };
    };
    const result = await modelEngine().classifyLeads(
      leads.map((l) => ({
        id: l.id,
        companyName: l.company_name,
        category: l.category,
        description: l.description,
      })),
    );
    expect(server.calls).toHaveLength(1);
    expect(result.get(leads[0]!.id)).toEqual([expect.stringContaining("Plumb")]);
    expect(result.get(leads[1]!.id)).toEqual([expect.stringContaining("Plumb")]);
    expect(result.has(leads[2]!.id)).toBe(false);
  });
});

describe("configuration (AI_MODEL, AI_BASE_URL, AI_API_KEY)", () => {
  it("uses the built-in back end without AI_MODEL and refuses a half-configured model", () => {
    expect(loadConfig({}).aiModel).toBeUndefined();
    expect(loadConfig({ AI_MODEL: "llama3.1", AI_BASE_URL: "http://localhost:11434/v1/" }).aiModel).toEqual({
      baseUrl: "http://localhost:11434/v1",
      apiKey: undefined,
      model: "llama3.1",
      timeoutMs: 30_000,
      maxTokens: 1_500,
    });
    expect(
      loadConfig({
        AI_MODEL: "gpt-4o-mini",
        AI_API_KEY: "sk-x",
        AI_TIMEOUT_SECONDS: "5",
        AI_MAX_TOKENS: "200",
      }).aiModel,
    ).toEqual({
      baseUrl: "https://api.openai.com/v1",
      apiKey: "sk-x",
      model: "gpt-4o-mini",
      timeoutMs: 5_000,
      maxTokens: 200,
    });
    expect(() => loadConfig({ AI_API_KEY: "sk-x" })).toThrow(/AI_MODEL/);
    expect(() => loadConfig({ AI_BASE_URL: "http://localhost:11434/v1" })).toThrow(/AI_MODEL/);
    expect(() => loadConfig({ AI_MODEL: "m", AI_MAX_TOKENS: "-1" })).toThrow(/AI_MAX_TOKENS/);
  });
});
