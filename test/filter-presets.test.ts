import { describe, expect, it } from "vitest";
import { parseSearchFilters, searchFiltersToJson } from "../src/leads/search/filters.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { expectKeyAndPlanRequired } from "./helpers/lead-records-factories.js";

const t = useTestApp();

type Auth = { Authorization: string };
const validPreset = {
  name: "Texas plumbers",
  filters: { positiveKeywords: ["plumb"], stateInclude: ["tx"] },
};

async function presetsOf(auth: Auth) {
  const res = await t.request().get("/api/v1/filter-presets").set(auth).expect(200);
  return res.body.data as { id: number; name: string; filters: Record<string, unknown>; createdAt: string }[];
}

async function createPreset(auth: Auth, body: object = validPreset) {
  const res = await t.request().post("/api/v1/filter-presets").set(auth).send(body).expect(201);
  return res.body.data as { id: number; name: string; filters: Record<string, unknown> };
}

describe("POST /filter-presets", () => {
  it("saves the normalised search parameters and drops members that are not search parameters", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .post("/api/v1/filter-presets")
      .set(auth)
      .send({
        name: "  Roofers  ",
        filters: {
          positiveKeywords: [" roof ", "", "roof", "gutter"],
          negativeKeywords: ["solar"],
          orColumns: ["wCompanyName", "registeredUrl"],
          nameIncludeTerms: ["llc"],
          stateInclude: ["tx", "Ca"],
          zipInclude: ["787"],
          minStars: 3.5,
          maxReviewCount: 500,
          sortBy: "wCompanyName",
          sortOrder: "asc",
          somethingElse: { nested: true },
          color: "blue",
        },
        extra: "ignored",
      })
      .expect(201);
    expect(res.body.data).toEqual({
      id: expect.any(Number),
      name: "Roofers",
      filters: {
        positiveKeywords: ["roof", "gutter"],
        negativeKeywords: ["solar"],
        orColumns: ["companyName", "registeredUrl"],
        nameIncludeTerms: ["llc"],
        stateInclude: ["TX", "CA"],
        zipInclude: ["787"],
        minStars: 3.5,
        maxReviewCount: 500,
        sortBy: "companyName",
        sortOrder: "asc",
        page: 1,
        limit: 100,
        database: "other",
      },
      createdAt: expect.any(String),
    });
    const stored = await t.ctx.db
      .selectFrom("filter_presets")
      .select("filters")
      .where("id", "=", res.body.data.id)
      .executeTakeFirstOrThrow();
    expect(stored.filters).not.toHaveProperty("somethingElse");
    expect(stored.filters).not.toHaveProperty("color");
    expect(await presetsOf(auth)).toEqual([res.body.data]);
  });

  it("stores filters that a search reads back unchanged", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const preset = await createPreset(auth, {
      name: "round trip",
      filters: {
        positiveKeywords: ["pool"],
        cityInclude: ["Austin"],
        maxStars: 4,
        orColumns: ["wCrawledUrl"],
      },
    });
    const reparsed = parseSearchFilters(preset.filters, "body");
    expect(searchFiltersToJson(reparsed)).toEqual(preset.filters);
  });

  it("accepts an include term as the only positive filter", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const preset = await createPreset(auth, {
      name: "by url",
      filters: { urlIncludeTerms: ["pool repair"] },
    });
    expect(preset.filters).toMatchObject({ urlIncludeTerms: ["pool repair"] });
  });

  it.each([
    ["no positive filter", { stateInclude: ["TX"] }, ["body", "filters", "positiveKeywords"]],
    ["only blank keywords", { positiveKeywords: [" ", ""] }, ["body", "filters", "positiveKeywords"]],
    ["an empty object", {}, ["body", "filters", "positiveKeywords"]],
    ["keywords as a string", { positiveKeywords: "plumb" }, ["body", "filters", "positiveKeywords"]],
    [
      "a keyword that is not a string",
      { positiveKeywords: ["a", 1] },
      ["body", "filters", "positiveKeywords", "1"],
    ],
    [
      "an unknown orColumns name",
      { positiveKeywords: ["a"], orColumns: ["favoriteColor"] },
      ["body", "filters", "orColumns"],
    ],
    [
      "a state that is not a code",
      { positiveKeywords: ["a"], stateInclude: ["Texas"] },
      ["body", "filters", "stateInclude"],
    ],
    ["stars above 5", { positiveKeywords: ["a"], minStars: 6 }, ["body", "filters", "minStars"]],
    ["stars as a string", { positiveKeywords: ["a"], minStars: "3" }, ["body", "filters", "minStars"]],
    [
      "a negative review count",
      { positiveKeywords: ["a"], minReviewCount: -1 },
      ["body", "filters", "minReviewCount"],
    ],
    [
      "an unknown sortBy",
      { positiveKeywords: ["a"], sortBy: "favoriteColor" },
      ["body", "filters", "sortBy"],
    ],
    ["an unknown sortOrder", { positiveKeywords: ["a"], sortOrder: "up" }, ["body", "filters", "sortOrder"]],
  ])("refuses %s with 400 validation_error and details, saving nothing", async (_label, filters, path) => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .post("/api/v1/filter-presets")
      .set(auth)
      .send({ name: "bad", filters })
      .expect(400);
    expect(res.body.error).toBe("validation_error");
    expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    expect(await presetsOf(auth)).toEqual([]);
  });

  it.each([
    ["a missing name", { filters: validPreset.filters }],
    ["an empty name", { name: "", filters: validPreset.filters }],
    ["a blank name", { name: "   ", filters: validPreset.filters }],
    ["a name over 255 characters", { name: "n".repeat(256), filters: validPreset.filters }],
    ["missing filters", { name: "x" }],
    ["filters that are not an object", { name: "x", filters: ["plumb"] }],
    ["null filters", { name: "x", filters: null }],
  ])("refuses %s with 400 validation_error, saving nothing", async (_label, body) => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t.request().post("/api/v1/filter-presets").set(auth).send(body).expect(400);
    expect(res.body.error).toBe("validation_error");
    expect(await presetsOf(auth)).toEqual([]);
  });
});

describe("GET /filter-presets", () => {
  it("lists the account's presets newest first, and never another account's", async () => {
    const owner = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const first = await createPreset(owner.auth, { ...validPreset, name: "first" });
    const second = await createPreset(owner.auth, { ...validPreset, name: "second" });
    await createPreset(other.auth, { ...validPreset, name: "theirs" });
    expect((await presetsOf(owner.auth)).map((p) => p.id)).toEqual([second.id, first.id]);
    expect((await presetsOf(other.auth)).map((p) => p.name)).toEqual(["theirs"]);
  });
});

describe("DELETE /filter-presets/{id}", () => {
  it("deletes the preset", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const keep = await createPreset(auth, { ...validPreset, name: "keep" });
    const gone = await createPreset(auth, { ...validPreset, name: "gone" });
    const res = await t.request().delete(`/api/v1/filter-presets/${gone.id}`).set(auth).expect(200);
    expect(res.body.data.message).toEqual(expect.any(String));
    expect((await presetsOf(auth)).map((p) => p.id)).toEqual([keep.id]);
    const again = await t.request().delete(`/api/v1/filter-presets/${gone.id}`).set(auth).expect(404);
    expect(again.body.error).toBe("not_found");
  });

  it("answers 404 for another account's preset and keeps it", async () => {
    const owner = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const preset = await createPreset(owner.auth);
    const res = await t.request().delete(`/api/v1/filter-presets/${preset.id}`).set(other.auth).expect(404);
    expect(res.body.error).toBe("not_found");
    expect(await presetsOf(owner.auth)).toHaveLength(1);
  });

  it("refuses an id that is not an integer with 400", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t.request().delete("/api/v1/filter-presets/1.5").set(auth).expect(400);
    expect(res.body.error).toBe("validation_error");
  });
});

describe("keys and plans", () => {
  it("needs a valid, unrevoked key of an account with a paid plan", async () => {
    const owner = await buildAccount(t.ctx.db);
    const preset = await createPreset(owner.auth);
    await expectKeyAndPlanRequired(t, [
      { method: "get", path: "/api/v1/filter-presets" },
      { method: "post", path: "/api/v1/filter-presets", body: validPreset },
      { method: "delete", path: `/api/v1/filter-presets/${preset.id}` },
    ]);
    expect((await presetsOf(owner.auth)).map((p) => p.id)).toEqual([preset.id]);
  });
});
