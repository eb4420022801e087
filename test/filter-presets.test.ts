import { describe, expect, it } from "vitest";
import { presetSearchFilters } from "../src/filter-presets/service.js";
import { parseSearchFilters, searchFiltersToJson } from "../src/leads/search/filters.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { expectKeyAndPlanRequired } from "./helpers/lead-records-factories.js";
import { pyJsonDumps, pyUrlencode } from "./helpers/python-encoding.js";

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
      ["body", "filters", "positiveKeywords"],
    ],
    ["keywords as a number", { positiveKeywords: 42 }, ["body", "filters", "positiveKeywords"]],
    [
      "a JSON-array string that is not JSON",
      { positiveKeywords: '["a",' },
      ["body", "filters", "positiveKeywords"],
    ],
    [
      "a comma string for a list that takes arrays",
      { positiveKeywords: ["a"], cityInclude: "Austin,Dallas" },
      ["body", "filters", "cityInclude"],
    ],
    [
      "a comma-separated state that is not a code",
      { positiveKeywords: ["a"], stateInclude: "NY, Texas" },
      ["body", "filters", "stateInclude"],
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

describe("POST /filter-presets: lists as JSON-array strings and comma strings", () => {
  it("stores the same canonical filters as the array form", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const asArrays = await createPreset(auth, {
      name: "arrays",
      filters: {
        positiveKeywords: ["*dental*", "*dentist*"],
        orColumns: ["wCompanyName"],
        nameIncludeTerms: ["clinic"],
        stateInclude: ["FL", "GA"],
        cityInclude: ["Miami"],
        zipInclude: ["33101"],
      },
    });
    const asText = await createPreset(auth, {
      name: "text",
      filters: {
        positiveKeywords: '["*dental*","*dentist*"]',
        orColumns: '["wCompanyName"]',
        nameIncludeTerms: ' ["clinic"] ',
        stateInclude: "FL, GA",
        cityInclude: '["Miami"]',
        zipInclude: "[33101]",
      },
    });
    expect(asText.filters).toEqual(asArrays.filters);
    expect(asText.filters).toMatchObject({
      positiveKeywords: ["*dental*", "*dentist*"],
      stateInclude: ["FL", "GA"],
      zipInclude: ["33101"],
    });
  });

  it('takes a single state as "NY" and a JSON-array string of states', async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const one = await createPreset(auth, {
      name: "ny",
      filters: { positiveKeywords: ["a"], stateInclude: "NY" },
    });
    expect(one.filters.stateInclude).toEqual(["NY"]);
    const json = await createPreset(auth, {
      name: "json",
      filters: { positiveKeywords: ["a"], stateExclude: '["tx","ok"]' },
    });
    expect(json.filters.stateExclude).toEqual(["TX", "OK"]);
  });
});

/** A positive or negative keyword list of the account. */
async function keywordList(auth: Auth, type: "positive" | "negative", keywords: string[]): Promise<number> {
  const res = await t
    .request()
    .post("/api/v1/keyword-lists")
    .set(auth)
    .send({ name: `${type} list`, type, keywords })
    .expect(201);
  return res.body.data.id as number;
}

describe("POST /filter-presets with a dashboard hash", () => {
  it("keeps the hash as sent and reads it back", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const hash = "#" + pyUrlencode({ ni: pyJsonDumps(["*dental*", "*dentist*"]), si: "TX,OK" });
    const preset = await createPreset(auth, { name: "TX dentists", filters: { hash } });
    expect(preset.filters).toEqual({ hash });
    expect((await presetsOf(auth))[0]?.filters).toEqual({ hash });
  });

  it("accepts a hash whose only positive filter is one of the account's positive keyword lists", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const positive = await keywordList(auth, "positive", ["*dental*"]);
    const negative = await keywordList(auth, "negative", ["*supply*"]);
    const hash = `nkl=${positive},${negative}&ukl=${positive}`;
    const preset = await createPreset(auth, { name: "lists", filters: { hash } });
    expect(preset.filters).toEqual({ hash });
  });

  it.each([
    ["an unknown key (a dashboard filter schedules do not apply)", "ni=%5B%22a%22%5D&lf=rel%3A7d", "lf:"],
    ["a key given twice", "ni=%5B%22a%22%5D&ni=%5B%22b%22%5D", "ni:"],
    ["a name list that is not JSON", "ni=dental", "ni:"],
    ["a JSON value that is not an array of strings", "ni=%7B%22a%22%3A1%7D", "ni:"],
    ["a list id that is not a number", "ni=%5B%22a%22%5D&nkl=abc", "nkl:"],
    ["no positive filter", "si=TX&ne=%5B%22a%22%5D", "no positive filter"],
    ["only blank name terms", "ni=%5B%22+%22%5D", "no positive filter"],
    ["an empty hash", "#", "no positive filter"],
    ["a state that is not a code", "ni=%5B%22a%22%5D&si=Texas", "si:"],
    ["an unknown keyword column", "ni=%5B%22a%22%5D&orc=favoriteColor", "orc:"],
  ])(
    "refuses %s with 400 validation_error at body.filters.hash, saving nothing",
    async (_label, hash, says) => {
      const { auth } = await buildAccount(t.ctx.db);
      const res = await t
        .request()
        .post("/api/v1/filter-presets")
        .set(auth)
        .send({ name: "bad", filters: { hash } });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error).toBe("validation_error");
      expect(res.body.details).toEqual(
        expect.arrayContaining([
          { path: ["body", "filters", "hash"], message: expect.stringContaining(says) },
        ]),
      );
      expect(await presetsOf(auth)).toEqual([]);
    },
  );

  it("refuses keyword list ids that are not the account's, and a negative list as the only positive filter", async () => {
    const owner = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const theirs = await keywordList(other.auth, "positive", ["*dental*"]);
    const negative = await keywordList(owner.auth, "negative", ["*supply*"]);
    for (const [hash, says] of [
      [`nkl=${theirs}`, `nkl: keyword list ${theirs} is not one of your keyword lists`],
      [`dkl=2000000000`, "dkl: keyword list 2000000000 is not one of your keyword lists"],
      [`nkl=${negative}`, "no positive filter"],
    ] as const) {
      const res = await t
        .request()
        .post("/api/v1/filter-presets")
        .set(owner.auth)
        .send({ name: "bad", filters: { hash } })
        .expect(400);
      expect(res.body.details).toEqual([
        { path: ["body", "filters", "hash"], message: expect.stringContaining(says) },
      ]);
    }
    expect(await presetsOf(owner.auth)).toEqual([]);
  });

  it("refuses a hash sent with other filters", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .post("/api/v1/filter-presets")
      .set(auth)
      .send({ name: "bad", filters: { hash: "ni=%5B%22a%22%5D", positiveKeywords: ["b"] } })
      .expect(400);
    expect(res.body.details).toEqual([
      { path: ["body", "filters", "positiveKeywords"], message: expect.any(String) },
    ]);
    expect(await presetsOf(auth)).toEqual([]);
  });

  it("refuses a hash that is not a string", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .post("/api/v1/filter-presets")
      .set(auth)
      .send({ name: "bad", filters: { hash: 5 } })
      .expect(400);
    expect(res.body.error).toBe("validation_error");
    expect(await presetsOf(auth)).toEqual([]);
  });
});

describe("the search a preset runs (presetSearchFilters)", () => {
  const storedOf = async (id: number) =>
    (
      await t.ctx.db
        .selectFrom("filter_presets")
        .select("filters")
        .where("id", "=", id)
        .executeTakeFirstOrThrow()
    ).filters;

  it("translates every hash key into the search parameters", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const positive = await keywordList(auth, "positive", ["*dental*", "*dentist*"]);
    const negative = await keywordList(auth, "negative", ["*supply*"]);
    const hash =
      "#" +
      pyUrlencode({
        ni: pyJsonDumps(["*clinic*"]),
        ne: pyJsonDumps(["*lab*"]),
        ui: pyJsonDumps(["smile"]),
        ue: pyJsonDumps(["blog"]),
        cli: pyJsonDumps(["teeth"]),
        cle: pyJsonDumps(["shop"]),
        di: pyJsonDumps(["family"]),
        de: pyJsonDumps(["veterinary"]),
        ci: pyJsonDumps(["Austin"]),
        ce: pyJsonDumps(["Dallas"]),
        zi: pyJsonDumps(["787"]),
        ze: pyJsonDumps(["78701"]),
        si: "TX,OK",
        se: "CA",
        rf: "no",
        orc: "wCompanyName,aiCategoryEstimation",
        q: "care",
        urf: "Newly Added,Phone Primary",
        nkl: String(positive),
        ckl: String(negative),
      });
    const preset = await createPreset(auth, { name: "everything", filters: { hash } });
    const filters = await presetSearchFilters(t.ctx.db, accountId, await storedOf(preset.id));
    expect(filters).toMatchObject({
      positiveKeywords: ["*dental*", "*dentist*"],
      negativeKeywords: ["*supply*"],
      orColumns: ["companyName", "aiCategoryEstimation"],
      includeTerms: {
        companyName: ["*clinic*"],
        registeredUrl: ["smile"],
        crawledUrl: ["teeth"],
        description: ["family"],
      },
      excludeTerms: {
        companyName: ["*lab*"],
        registeredUrl: ["blog"],
        crawledUrl: ["shop"],
        description: ["veterinary"],
      },
      search: "care",
      stateInclude: ["TX", "OK"],
      stateExclude: ["CA"],
      cityInclude: ["Austin"],
      cityExclude: ["Dallas"],
      zipInclude: ["787"],
      zipExclude: ["78701"],
      redirect: "no",
      buyingSignalTypes: ["Newly Added", "Phone Primary"],
    });
  });

  it("reads the keyword lists at each run: a changed list changes the search, a deleted one is gone", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const positive = await keywordList(auth, "positive", ["*dental*"]);
    const negative = await keywordList(auth, "negative", ["*supply*"]);
    const preset = await createPreset(auth, {
      name: "lists",
      filters: { hash: `nkl=${positive},${negative}` },
    });
    const stored = await storedOf(preset.id);
    expect(await presetSearchFilters(t.ctx.db, accountId, stored)).toMatchObject({
      positiveKeywords: ["*dental*"],
      negativeKeywords: ["*supply*"],
    });
    await t
      .request()
      .put(`/api/v1/keyword-lists/${positive}`)
      .set(auth)
      .send({ keywords: ["*orthodont*"] })
      .expect(200);
    await t.request().delete(`/api/v1/keyword-lists/${negative}`).set(auth).expect(200);
    const after = await presetSearchFilters(t.ctx.db, accountId, stored);
    expect(after).toMatchObject({ positiveKeywords: ["*orthodont*"], negativeKeywords: [] });
    // Its only positive filter deleted: the preset no longer runs a search.
    await t.request().delete(`/api/v1/keyword-lists/${positive}`).set(auth).expect(200);
    expect(await presetSearchFilters(t.ctx.db, accountId, stored)).toBeUndefined();
  });

  it("never reads another account's lists, and runs a search-parameter preset as stored", async () => {
    const owner = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const list = await keywordList(owner.auth, "positive", ["*dental*"]);
    expect(await presetSearchFilters(t.ctx.db, other.accountId, { hash: `nkl=${list}` })).toBeUndefined();
    const preset = await createPreset(owner.auth, validPreset);
    expect(await presetSearchFilters(t.ctx.db, owner.accountId, await storedOf(preset.id))).toMatchObject({
      positiveKeywords: ["plumb"],
      stateInclude: ["TX"],
    });
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
