import { describe, expect, it } from "vitest";
import { ApiError } from "../src/http/errors.js";
import { parseSearchRequest } from "../src/leads/search/controls.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { expectKeyAndPlanRequired } from "./helpers/lead-records-factories.js";
import { buildLead, uniqueWord } from "./helpers/leads-factories.js";

const t = useTestApp();

type Auth = { Authorization: string };
type Query = Record<string, string | number>;

/** Ids found by a free preview of the same search (so one account can run many), sorted by id. */
async function found(auth: Auth, query: Query): Promise<number[]> {
  const res = await t
    .request()
    .get("/api/v1/leads/preview")
    .query({ sortBy: "id", sortOrder: "asc", ...query })
    .set(auth)
    .expect(200);
  return res.body.data.leads.map((l: { id: number }) => l.id);
}

async function account(): Promise<Auth> {
  return (await buildAccount(t.ctx.db)).auth;
}

describe("phase 1: positive keywords over the searched columns", () => {
  it("matches registered URL, crawled URL, company name and AI categories, ignoring case", async () => {
    const auth = await account();
    const w = uniqueWord();
    const byUrl = await buildLead(t.ctx.db, { registered_url: `https://${w}plumbing.com` });
    const byCrawled = await buildLead(t.ctx.db, { crawled_url: `https://www.${w.toUpperCase()}.net/home` });
    const byName = await buildLead(t.ctx.db, { company_name: `${w.toUpperCase()} Roofing LLC` });
    const byCategory = await buildLead(t.ctx.db, { ai_category_estimation: ["Plumber", `${w} Services`] });
    await buildLead(t.ctx.db, { description: `${w} only in the description` });
    await buildLead(t.ctx.db, { city: w, street: w, email: `${w}@example.com` });
    expect(await found(auth, { positiveKeywords: w })).toEqual([byUrl, byCrawled, byName, byCategory]);
    expect(await found(auth, { positiveKeywords: w.toUpperCase() })).toEqual([
      byUrl,
      byCrawled,
      byName,
      byCategory,
    ]);
  });

  it("includes a lead when any of several keywords matches (OR)", async () => {
    const auth = await account();
    const a = uniqueWord();
    const b = uniqueWord();
    const one = await buildLead(t.ctx.db, { company_name: `${a} inc` });
    const two = await buildLead(t.ctx.db, { registered_url: `${b}.com` });
    expect(await found(auth, { positiveKeywords: `${a},${b}` })).toEqual([one, two]);
    // The JSON array string form, with a comma inside a term.
    const three = await buildLead(t.ctx.db, { company_name: `${a}, ${b} and sons` });
    expect(await found(auth, { positiveKeywords: JSON.stringify([`${a}, ${b}`]) })).toEqual([three]);
    expect(await found(auth, { positiveKeywords: JSON.stringify([a, b]) })).toEqual([one, two, three]);
  });

  it("in URL columns a space is a wildcard (words in order), elsewhere it is literal", async () => {
    const auth = await account();
    const w = uniqueWord();
    const url = await buildLead(t.ctx.db, { registered_url: `https://${w}pool-and-spa-repair.com` });
    const crawled = await buildLead(t.ctx.db, { crawled_url: `https://${w}poolrepair.net` });
    const nameLiteral = await buildLead(t.ctx.db, { company_name: `${w}pool repair co` });
    await buildLead(t.ctx.db, { company_name: `${w}pool and spa repair` });
    await buildLead(t.ctx.db, { registered_url: `https://${w}repair-pool.com` });
    await buildLead(t.ctx.db, { ai_category_estimation: [`${w}pool`, "repair"] });
    expect(await found(auth, { positiveKeywords: `${w}pool repair` })).toEqual([url, crawled, nameLiteral]);
  });

  it("treats % and _ typed by the client as literal characters", async () => {
    const auth = await account();
    const w = uniqueWord();
    const percent = await buildLead(t.ctx.db, { company_name: `${w} 100% Organic` });
    await buildLead(t.ctx.db, { company_name: `${w} 1000 Organic` });
    const underscore = await buildLead(t.ctx.db, { registered_url: `https://${w}_shop.com` });
    await buildLead(t.ctx.db, { registered_url: `https://${w}xshop.com` });
    const backslash = await buildLead(t.ctx.db, { company_name: `${w}\\tools` });
    expect(await found(auth, { positiveKeywords: `${w} 100%` })).toEqual([percent]);
    expect(await found(auth, { positiveKeywords: `${w}_shop` })).toEqual([underscore]);
    expect(await found(auth, { positiveKeywords: `${w}\\tools` })).toEqual([backslash]);
    // A % between words in a URL term is literal too (only spaces are wildcards).
    expect(await found(auth, { positiveKeywords: `${w}%shop` })).toEqual([]);
  });
});

describe("query encoding", () => {
  it("accepts raw reserved characters: + for a space, a raw JSON array string, a URL with a path", async () => {
    const auth = await account();
    const w = uniqueWord();
    const wildcard = await buildLead(t.ctx.db, {
      registered_url: `https://${w}pool-and-spa-repair.com/shop`,
    });
    const named = await buildLead(t.ctx.db, { company_name: `${w} plus+more` });
    const get = async (query: string) => {
      const res = await t
        .request()
        .get(`/api/v1/leads/preview?${query}&sortBy=id&sortOrder=asc`)
        .set(auth)
        .expect(200);
      return res.body.data.leads.map((l: { id: number }) => l.id);
    };
    expect(await get(`positiveKeywords=${w}pool+repair`)).toEqual([wildcard]);
    expect(await get(`positiveKeywords=["${w}pool repair","${w} plus%2Bmore"]`)).toEqual([wildcard, named]);
    expect(await get(`urlIncludeTerms=${w}pool-and-spa-repair.com/shop`)).toEqual([wildcard]);
    expect(await get(`positiveKeywords=${w}%20plus%2Bmore,nothing-else`)).toEqual([named]);
    // A raw % that is not an escape is taken as the character itself.
    const percent = await buildLead(t.ctx.db, { company_name: `${w} 100% local` });
    expect(await get(`positiveKeywords=${w}+100%+local`)).toEqual([percent]);
  });
});

describe("many terms", () => {
  it("a search with more than 20 terms (run under a statement timeout) matches the same way", async () => {
    const auth = await account();
    const w = uniqueWord();
    const hit = await buildLead(t.ctx.db, { company_name: `${w} hit` });
    await buildLead(t.ctx.db, { company_name: `${w} hit excluded` });
    const keywords = Array.from({ length: 20 }, (_, i) => `${w}miss${i}`).concat(`${w} hit`);
    expect(await found(auth, { positiveKeywords: keywords.join(","), negativeKeywords: "excluded" })).toEqual(
      [hit],
    );
  });
});

describe("orColumns", () => {
  it("chooses the columns of the OR group, by API name or database-style alias", async () => {
    const auth = await account();
    const w = uniqueWord();
    const url = await buildLead(t.ctx.db, { registered_url: `${w}.com` });
    const name = await buildLead(t.ctx.db, { company_name: `${w} LLC` });
    const description = await buildLead(t.ctx.db, { description: `We are ${w}.` });
    const city = await buildLead(t.ctx.db, { city: `${w}ville` });
    const email = await buildLead(t.ctx.db, { email_tier3: `hello@${w}.io` });
    const phone = await buildLead(t.ctx.db, { phone: null, phone_secondary: `(${w}) 555` });
    expect(await found(auth, { positiveKeywords: w, orColumns: "companyName" })).toEqual([name]);
    expect(await found(auth, { positiveKeywords: w, orColumns: "wCompanyName,description" })).toEqual([
      name,
      description,
    ]);
    expect(
      await found(auth, { positiveKeywords: w, orColumns: JSON.stringify(["registeredUrl", "city"]) }),
    ).toEqual([url, city]);
    expect(await found(auth, { positiveKeywords: w, orColumns: "email,phone" })).toEqual([email, phone]);
  });

  it("negative keywords are checked against the orColumns columns", async () => {
    const auth = await account();
    const w = uniqueWord();
    const keep = await buildLead(t.ctx.db, { company_name: `${w} plumbing`, description: "commercial work" });
    await buildLead(t.ctx.db, { company_name: `${w} commercial plumbing` });
    const url = await buildLead(t.ctx.db, {
      company_name: `${w} plumbing`,
      registered_url: "commercialplumb.com",
    });
    const category = await buildLead(t.ctx.db, {
      company_name: `${w} plumbing`,
      ai_category_estimation: ["Commercial"],
    });
    expect(await found(auth, { positiveKeywords: w, negativeKeywords: "commercial" })).toEqual([keep]);
    // With the OR group name + description, a negative keyword in the description removes the lead,
    // one in the URL or categories (outside the group) no longer does.
    expect(
      await found(auth, {
        positiveKeywords: w,
        negativeKeywords: "commercial",
        orColumns: "companyName,description",
      }),
    ).toEqual([url, category]);
  });

  it("an unknown column gives 400 validation_error with details", async () => {
    const auth = await account();
    const res = await t
      .request()
      .get("/api/v1/leads")
      .query({ positiveKeywords: "x", orColumns: "companyName,nope" })
      .set(auth)
      .expect(400);
    expect(res.body.error).toBe("validation_error");
    expect(res.body.details).toEqual([
      { path: ["query", "orColumns"], message: expect.stringContaining("nope") },
    ]);
  });
});

describe("column-specific include and exclude terms", () => {
  it("an include term of a column in orColumns joins the OR group", async () => {
    const auth = await account();
    const a = uniqueWord();
    const b = uniqueWord();
    const byKeyword = await buildLead(t.ctx.db, { registered_url: `${a}.com` });
    const byNameTerm = await buildLead(t.ctx.db, { company_name: `${b} Bakery` });
    await buildLead(t.ctx.db, { registered_url: `${b}.com` });
    expect(await found(auth, { positiveKeywords: a, nameIncludeTerms: b })).toEqual([byKeyword, byNameTerm]);
    // An include term alone is a positive filter.
    expect(await found(auth, { nameIncludeTerms: b })).toEqual([byNameTerm]);
  });

  it("an include term of a column outside orColumns is required", async () => {
    const auth = await account();
    const a = uniqueWord();
    const both = await buildLead(t.ctx.db, { registered_url: `${a}.com`, company_name: "Joe's Bakery" });
    await buildLead(t.ctx.db, { registered_url: `${a}-two.com`, company_name: "Joe's Diner" });
    await buildLead(t.ctx.db, { company_name: `${a} Bakery` });
    expect(
      await found(auth, { positiveKeywords: a, nameIncludeTerms: "bakery", orColumns: "registeredUrl" }),
    ).toEqual([both]);
    // city is not a searched column by default: cityIncludeTerms are required.
    const austin = await buildLead(t.ctx.db, { company_name: `${a} x`, city: "Round Rock" });
    await buildLead(t.ctx.db, { company_name: `${a} y`, city: "Dallas" });
    expect(await found(auth, { positiveKeywords: a, cityIncludeTerms: "rock,nothing" })).toEqual([austin]);
  });

  it("url and crawled URL include terms use the space wildcard", async () => {
    const auth = await account();
    const a = uniqueWord();
    const url = await buildLead(t.ctx.db, { registered_url: `${a}-tree-service.com` });
    const crawled = await buildLead(t.ctx.db, { crawled_url: `${a}trees.com/service` });
    expect(await found(auth, { urlIncludeTerms: `${a} service` })).toEqual([url]);
    expect(await found(auth, { crawledUrlIncludeTerms: `${a} service` })).toEqual([crawled]);
  });

  it("phone, e-mail, street and description include terms match their columns", async () => {
    const auth = await account();
    const a = uniqueWord();
    const phone = await buildLead(t.ctx.db, { company_name: a, phone: "(737) 555-0100" });
    const phone2 = await buildLead(t.ctx.db, {
      company_name: a,
      phone: "(512) 555-0100",
      phone_secondary: "737-1",
    });
    const email = await buildLead(t.ctx.db, {
      company_name: a,
      email: null,
      email_secondary: "x@acme-co.com",
    });
    const street = await buildLead(t.ctx.db, { company_name: a, street: "12 Elm Street" });
    const description = await buildLead(t.ctx.db, {
      company_name: a,
      description: "Family owned since 1990",
    });
    expect(await found(auth, { positiveKeywords: a, phoneIncludeTerms: "(737)" })).toEqual([phone]);
    expect(await found(auth, { positiveKeywords: a, phoneIncludeTerms: "737" })).toEqual([phone, phone2]);
    expect(await found(auth, { positiveKeywords: a, emailIncludeTerms: "ACME-CO" })).toEqual([email]);
    expect(await found(auth, { positiveKeywords: a, streetIncludeTerms: "elm st" })).toEqual([street]);
    expect(await found(auth, { positiveKeywords: a, descriptionIncludeTerms: "family owned" })).toEqual([
      description,
    ]);
  });

  it("exclude terms remove a lead when any matches their column", async () => {
    const auth = await account();
    const a = uniqueWord();
    const keep = await buildLead(t.ctx.db, { company_name: `${a} Plumbing`, registered_url: `${a}.com` });
    await buildLead(t.ctx.db, { company_name: `${a} Franchise Plumbing` });
    await buildLead(t.ctx.db, { company_name: `${a} Two`, registered_url: `${a}-shop.example.org` });
    await buildLead(t.ctx.db, { company_name: `${a} Three`, email: "x@gmail.com" });
    await buildLead(t.ctx.db, { company_name: `${a} Four`, description: "A national chain" });
    expect(
      await found(auth, {
        positiveKeywords: a,
        nameExcludeTerms: "franchise",
        urlExcludeTerms: "shop org",
        emailExcludeTerms: "gmail",
        descriptionExcludeTerms: "chain",
      }),
    ).toEqual([keep]);
  });
});

describe("location, rating and schema filters", () => {
  it("state include / exclude take two-letter codes in any case; leads without a state survive an exclude", async () => {
    const auth = await account();
    const a = uniqueWord();
    const tx = await buildLead(t.ctx.db, { company_name: a, state: "TX" });
    const ca = await buildLead(t.ctx.db, { company_name: a, state: "CA" });
    const none = await buildLead(t.ctx.db, { company_name: a, state: null });
    expect(await found(auth, { positiveKeywords: a, stateInclude: "tx" })).toEqual([tx]);
    expect(await found(auth, { positiveKeywords: a, stateInclude: '["TX","ca"]' })).toEqual([tx, ca]);
    expect(await found(auth, { positiveKeywords: a, stateExclude: "Tx" })).toEqual([ca, none]);
  });

  it("city include / exclude are substrings; zip include / exclude: 5 digits exact, fewer a prefix", async () => {
    const auth = await account();
    const a = uniqueWord();
    const austin = await buildLead(t.ctx.db, { company_name: a, city: "Austin", zip: "78701" });
    const eastAustin = await buildLead(t.ctx.db, { company_name: a, city: "East Austin", zip: "78702" });
    const dallas = await buildLead(t.ctx.db, { company_name: a, city: "Dallas", zip: "75201" });
    const noZip = await buildLead(t.ctx.db, { company_name: a, city: null, zip: null });
    expect(await found(auth, { positiveKeywords: a, cityInclude: "AUSTIN" })).toEqual([austin, eastAustin]);
    expect(await found(auth, { positiveKeywords: a, cityExclude: "austin" })).toEqual([dallas, noZip]);
    expect(await found(auth, { positiveKeywords: a, zipInclude: "787" })).toEqual([austin, eastAustin]);
    expect(await found(auth, { positiveKeywords: a, zipInclude: "75201,78702" })).toEqual([
      eastAustin,
      dallas,
    ]);
    expect(await found(auth, { positiveKeywords: a, zipExclude: "787" })).toEqual([dallas, noZip]);
  });

  it("stars and review-count ranges are inclusive and remove leads without a value", async () => {
    const auth = await account();
    const a = uniqueWord();
    const low = await buildLead(t.ctx.db, { company_name: a, stars: 3.5, review_count: 5 });
    const high = await buildLead(t.ctx.db, { company_name: a, stars: 4.8, review_count: 120 });
    const none = await buildLead(t.ctx.db, { company_name: a, stars: null, review_count: null });
    expect(await found(auth, { positiveKeywords: a })).toEqual([low, high, none]);
    expect(await found(auth, { positiveKeywords: a, minStars: 3.5 })).toEqual([low, high]);
    expect(await found(auth, { positiveKeywords: a, maxStars: 4 })).toEqual([low]);
    expect(await found(auth, { positiveKeywords: a, minReviewCount: 6 })).toEqual([high]);
    expect(await found(auth, { positiveKeywords: a, minReviewCount: 5, maxReviewCount: 120 })).toEqual([
      low,
      high,
    ]);
    expect(await found(auth, { positiveKeywords: a, maxReviewCount: 4 })).toEqual([]);
  });

  it("websiteSchemaFilter keeps leads with a type containing any of the listed ones", async () => {
    const auth = await account();
    const a = uniqueWord();
    const plumber = await buildLead(t.ctx.db, {
      company_name: a,
      website_schema_types: ["Plumber", "LocalBusiness"],
    });
    const dentist = await buildLead(t.ctx.db, { company_name: a, website_schema_types: ["Dentist"] });
    const plumberX = await buildLead(t.ctx.db, { company_name: a, website_schema_types: ["PlumberX"] });
    await buildLead(t.ctx.db, { company_name: a });
    expect(await found(auth, { positiveKeywords: a, websiteSchemaFilter: "Plumber" })).toEqual([
      plumber,
      plumberX,
    ]);
    expect(await found(auth, { positiveKeywords: a, websiteSchemaFilter: "Dentist,LocalBusiness" })).toEqual([
      plumber,
      dentist,
    ]);
  });
});

describe("sorting and pagination", () => {
  it("sorts by the last buying signal, newest first, by default; leads without one last", async () => {
    const auth = await account();
    const a = uniqueWord();
    const old = await buildLead(t.ctx.db, {
      company_name: a,
      last_buying_signal: new Date("2025-01-01T00:00:00Z"),
    });
    const none = await buildLead(t.ctx.db, { company_name: a, last_buying_signal: null });
    const recent = await buildLead(t.ctx.db, {
      company_name: a,
      last_buying_signal: new Date("2026-06-01T00:00:00Z"),
    });
    const res = await t
      .request()
      .get("/api/v1/leads/preview")
      .query({ positiveKeywords: a })
      .set(auth)
      .expect(200);
    expect(res.body.data.leads.map((l: { id: number }) => l.id)).toEqual([recent, old, none]);
    const asc = await found(auth, { positiveKeywords: a, sortBy: "lastBuyingSignal", sortOrder: "asc" });
    expect(asc).toEqual([old, recent, none]);
  });

  it("sorts by any single-valued field, by name or alias", async () => {
    const auth = await account();
    const a = uniqueWord();
    const b = await buildLead(t.ctx.db, { company_name: `${a} b`, city: "Boston", review_count: 3 });
    const c = await buildLead(t.ctx.db, { company_name: `${a} c`, city: "Austin", review_count: 9 });
    const d = await buildLead(t.ctx.db, { company_name: `${a} a`, city: "Chicago", review_count: null });
    expect(await found(auth, { positiveKeywords: a, sortBy: "companyName", sortOrder: "asc" })).toEqual([
      d,
      b,
      c,
    ]);
    expect(await found(auth, { positiveKeywords: a, sortBy: "wCity", sortOrder: "desc" })).toEqual([d, b, c]);
    expect(await found(auth, { positiveKeywords: a, sortBy: "reviewCount", sortOrder: "desc" })).toEqual([
      c,
      b,
      d,
    ]);
  });

  it("pages through the matches with page and limit", async () => {
    const auth = await account();
    const a = uniqueWord();
    const all: number[] = [];
    for (let i = 0; i < 5; i += 1) all.push(await buildLead(t.ctx.db, { company_name: `${a} ${i}` }));
    const page = async (n: number) =>
      (
        await t
          .request()
          .get("/api/v1/leads/preview")
          .query({ positiveKeywords: a, sortBy: "id", sortOrder: "asc", limit: 2, page: n })
          .set(auth)
          .expect(200)
      ).body.data;
    const first = await page(1);
    expect(first.pagination).toEqual({ page: 1, limit: 2, total: 5, pages: 3 });
    expect(first.leads.map((l: { id: number }) => l.id)).toEqual(all.slice(0, 2));
    expect((await page(3)).leads.map((l: { id: number }) => l.id)).toEqual(all.slice(4));
    expect((await page(4)).leads).toEqual([]);
  });
});

describe("bad input", () => {
  const cases: [string, Query, string[]][] = [
    ["limit 0", { positiveKeywords: "x", limit: 0 }, ["query", "limit"]],
    ["limit over 1000", { positiveKeywords: "x", limit: 1001 }, ["query", "limit"]],
    ["page 0", { positiveKeywords: "x", page: 0 }, ["query", "page"]],
    ["minStars over 5", { positiveKeywords: "x", minStars: 6 }, ["query", "minStars"]],
    [
      "a non-numeric review count",
      { positiveKeywords: "x", minReviewCount: "many" },
      ["query", "minReviewCount"],
    ],
    ["an unknown sortOrder", { positiveKeywords: "x", sortOrder: "up" }, ["query", "sortOrder"]],
    ["an unknown sortBy", { positiveKeywords: "x", sortBy: "favouriteColour" }, ["query", "sortBy"]],
    ["an object field as sortBy", { positiveKeywords: "x", sortBy: "socialProfiles" }, ["query", "sortBy"]],
    ["a malformed JSON array", { positiveKeywords: '["a",' + "]" }, ["query", "positiveKeywords"]],
    [
      "a state that is not a code",
      { positiveKeywords: "x", stateInclude: "Texas" },
      ["query", "stateInclude"],
    ],
    ["an unknown parameter", { positiveKeywords: "x", colour: "red" }, ["query", "colour"]],
  ];
  for (const [name, query, path] of cases) {
    it(`${name}: 400 validation_error with details, on search and preview, nothing charged`, async () => {
      const { accountId, auth } = await buildAccount(t.ctx.db);
      for (const endpoint of ["/api/v1/leads", "/api/v1/leads/preview"]) {
        const res = await t.request().get(endpoint).query(query).set(auth).expect(400);
        expect(res.body.error).toBe("validation_error");
        expect(res.body.details.map((d: { path: string[] }) => d.path)).toContainEqual(path);
      }
      const charges = await t.ctx.db
        .selectFrom("credit_ledger")
        .select("id")
        .where("account_id", "=", accountId)
        .where("kind", "=", "charge")
        .execute();
      expect(charges).toEqual([]);
    });
  }

  it("database: any value resolves to other", async () => {
    const auth = await account();
    const a = uniqueWord();
    const lead = await buildLead(t.ctx.db, { company_name: a });
    const res = await t
      .request()
      .get("/api/v1/leads/preview")
      .query({ positiveKeywords: a, database: "home_improvement" })
      .set(auth)
      .expect(200);
    expect(res.body.data.databaseType).toBe("other");
    expect(res.body.data.leads.map((l: { id: number }) => l.id)).toEqual([lead]);
  });
});

describe("cost controls: bad input", () => {
  const cases: [string, string, string][] = [
    ["a negative maxCredits", "maxCredits=-1", "maxCredits"],
    ["a decimal maxCredits", "maxCredits=2.5", "maxCredits"],
    ["a text maxCredits", "maxCredits=five", "maxCredits"],
    ["an empty maxCredits", "maxCredits=", "maxCredits"],
    ["maxCredits given twice", "maxCredits=5&maxCredits=6", "maxCredits"],
    ["maxCredits over 32 bits", "maxCredits=2147483648", "maxCredits"],
    ["maxResults 0", "maxResults=0", "maxResults"],
    ["a negative maxResults", "maxResults=-3", "maxResults"],
    ["a decimal maxResults", "maxResults=1.5", "maxResults"],
    ["a text maxResults", "maxResults=all", "maxResults"],
    ["maxResults given twice", "maxResults=3&maxResults=3", "maxResults"],
    ["excludePurchased not true or false", "excludePurchased=yes", "excludePurchased"],
    ["excludePurchased given twice", "excludePurchased=true&excludePurchased=true", "excludePurchased"],
  ];
  for (const [name, query, parameter] of cases) {
    it(`${name}: 400 validation_error with details, nothing charged or recorded`, async () => {
      const { accountId, auth } = await buildAccount(t.ctx.db);
      const w = uniqueWord();
      await buildLead(t.ctx.db, { company_name: w });
      for (const q of [`positiveKeywords=${w}&${query}`, `stateInclude=TX&${query}`]) {
        const res = await t.request().get(`/api/v1/leads?${q}`).set(auth).expect(400);
        expect(res.body.error).toBe("validation_error");
        expect(res.body.details.map((d: { path: string[] }) => d.path)).toContainEqual(["query", parameter]);
      }
      const charges = await t.ctx.db
        .selectFrom("credit_ledger")
        .select("id")
        .where("account_id", "=", accountId)
        .where("kind", "=", "charge")
        .execute();
      expect(charges).toEqual([]);
      const history = await t.ctx.db
        .selectFrom("lead_export_history")
        .select("lead_id")
        .where("account_id", "=", accountId)
        .execute();
      expect(history).toEqual([]);
    });
  }

  it("parseSearchRequest reads them from the raw URL and reports every problem of filters and controls", () => {
    const url =
      "/api/v1/leads?positiveKeywords=x&stateInclude=Texas&maxCredits=5&maxCredits=6&maxResults=1.5";
    let thrown: unknown;
    try {
      parseSearchRequest(url, ["maxCredits", "maxResults", "excludePurchased"]);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    const paths = (thrown as ApiError).details?.map((d) => d.path);
    expect(paths).toEqual([
      ["query", "stateInclude"],
      ["query", "maxCredits"],
      ["query", "maxResults"],
    ]);
    const ok = parseSearchRequest(
      `/api/v1/leads?positiveKeywords=x&maxCredits=0&maxResults=3&excludePurchased=true`,
      ["maxCredits", "maxResults", "excludePurchased"],
    );
    expect(ok.controls).toEqual({ maxCredits: 0, maxResults: 3, excludePurchased: true });
    // A name the operation does not take is left to the contract (it never reaches the parser).
    expect(parseSearchRequest("/x?positiveKeywords=x&maxCredits=-1", ["excludePurchased"]).controls).toEqual({
      maxCredits: null,
      maxResults: null,
      excludePurchased: false,
    });
    // No positive filter is not an error here.
    expect(parseSearchRequest("/x?stateInclude=TX", []).filters.stateInclude).toEqual(["TX"]);
  });
});

describe("no positive filter", () => {
  const queries: [string, Query][] = [
    ["no parameter at all", {}],
    ["only narrowing filters", { stateInclude: "TX", negativeKeywords: "x", cityInclude: "Austin" }],
    ["only empty keywords", { positiveKeywords: " , " }],
  ];
  for (const [name, query] of queries) {
    it(`${name}: GET /leads answers 200 with no leads and requiresKeywords; nothing charged or recorded`, async () => {
      const { accountId, auth } = await buildAccount(t.ctx.db, { monthlyCredits: 40 });
      const w = uniqueWord();
      await buildLead(t.ctx.db, { company_name: w, state: "TX", city: "Austin" });
      const res = await t
        .request()
        .get("/api/v1/leads")
        .query({ ...query, maxCredits: 5, maxResults: 2 })
        .set(auth)
        .expect(200);
      expect(res.headers["x-credits-capped"]).toBeUndefined();
      expect(res.body.data).toEqual({
        leads: [],
        pagination: { page: 1, limit: 100, total: 0, pages: 0 },
        databaseType: "other",
        creditsUsed: 0,
        creditsRemaining: 40,
        maxResults: 2,
        maxCredits: 5,
        requiresKeywords: true,
        message: expect.stringContaining("positiveKeywords"),
      });
      const charges = await t.ctx.db
        .selectFrom("credit_ledger")
        .select("id")
        .where("account_id", "=", accountId)
        .where("kind", "=", "charge")
        .execute();
      expect(charges).toEqual([]);
      const history = await t.ctx.db
        .selectFrom("lead_export_history")
        .select("lead_id")
        .where("account_id", "=", accountId)
        .execute();
      expect(history).toEqual([]);
    });
  }

  it("the answer of a search with a positive filter has no requiresKeywords or message", async () => {
    const auth = await account();
    const w = uniqueWord();
    await buildLead(t.ctx.db, { company_name: w });
    for (const endpoint of ["/api/v1/leads", "/api/v1/leads/preview"]) {
      const res = await t.request().get(endpoint).query({ positiveKeywords: w }).set(auth).expect(200);
      expect(res.body.data.requiresKeywords).toBeUndefined();
      expect(res.body.data.message).toBeUndefined();
      expect(res.body.data.leads).toHaveLength(1);
    }
  });
});

describe("authentication", () => {
  it("needs a valid, unrevoked key of an account with a paid plan, with or without a positive filter", async () => {
    await expectKeyAndPlanRequired(t, [
      { method: "get", path: "/api/v1/leads?positiveKeywords=x&maxCredits=5" },
      { method: "get", path: "/api/v1/leads?stateInclude=TX" },
    ]);
  });

  it("needs a valid key (401) and a paid plan (403)", async () => {
    for (const endpoint of ["/api/v1/leads", "/api/v1/leads/preview"]) {
      await t.request().get(endpoint).query({ positiveKeywords: "x" }).expect(401);
      await t
        .request()
        .get(endpoint)
        .query({ positiveKeywords: "x" })
        .set({ Authorization: "Bearer svck_notakey" })
        .expect(401);
      const canceled = await buildAccount(t.ctx.db, { status: "canceled" });
      await t.request().get(endpoint).query({ positiveKeywords: "x" }).set(canceled.auth).expect(403);
    }
  });
});
