import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { FILTERED_LEAD_FIELDS } from "../src/leads/fields.js";
import { parseSearchFilters, searchFiltersToJson } from "../src/leads/search/filters.js";
import { searchPageQuery } from "../src/leads/search/query.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLead, uniqueWord, type LeadInput } from "./helpers/leads-factories.js";

// The search parameters of the real service's REFERENCE.md section 2, each with its documented
// meaning, on leads built here (docs/leads.md, "Search parameters").
const t = useTestApp();

type Auth = { Authorization: string };
type Query = Record<string, string | number>;

/** Every query a test ran, sent again through HTTP at the end (the contract must accept it). */
const ran: Query[] = [];
let searcher: number | undefined;

/**
 * Ids found by a search (`sortBy=id`, all on one page), from the query string as `GET /leads`
 * parses it, over `lead_search` where it serves the search and over `leads`: both must agree.
 */
async function found(_auth: Auth, query: Query): Promise<number[]> {
  ran.push(query);
  searcher ??= (await buildAccount(t.ctx.db)).accountId;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries({ sortBy: "id", sortOrder: "asc", limit: 1000, ...query })) {
    params.set(k, String(v));
  }
  const filters = parseSearchFilters(`?${params}`, "query");
  const ids = async (useSearchTable: boolean) => {
    const { rows } = await searchPageQuery(filters, {
      accountId: searcher!,
      cap: null,
      useSearchTable,
    }).execute(t.ctx.db);
    return rows.flatMap((r) => (r.page_id === null ? [] : [r.page_id]));
  };
  const viaTable = await ids(true);
  expect(await ids(false), JSON.stringify(query)).toEqual(viaTable);
  return viaTable;
}

async function account(): Promise<Auth> {
  return (await buildAccount(t.ctx.db)).auth;
}

/** Leads that all carry the word `a` in their name (so `positiveKeywords=a` finds exactly them). */
const leadsOf = (a: string) => (overrides: LeadInput) =>
  buildLead(t.ctx.db, { company_name: a, ...overrides });

describe("wildcards in keywords and column terms", () => {
  it("a leading and trailing * add nothing; an inner * is any run of characters within one value", async () => {
    const auth = await account();
    const w = uniqueWord();
    const name = await buildLead(t.ctx.db, { company_name: `${w} Auto Body Repair` });
    const url = await buildLead(t.ctx.db, { registered_url: `https://${w}autorepair.com` });
    const category = await buildLead(t.ctx.db, {
      company_name: w,
      ai_category_estimation: ["Plumber", "Automotive Repair Shop"],
    });
    // The parts in two columns, in two category names, or in the wrong order: no match.
    await buildLead(t.ctx.db, { company_name: `${w} Auto Sales`, registered_url: "https://repair.example" });
    await buildLead(t.ctx.db, { company_name: w, ai_category_estimation: ["Auto Dealer", "Repair Shop"] });
    await buildLead(t.ctx.db, { company_name: `${w} Repair and Auto` });
    expect(await found(auth, { positiveKeywords: JSON.stringify([`*${w}*`]) })).toHaveLength(6);
    const keyword = JSON.stringify([`*${w}*auto*repair*`]);
    expect(await found(auth, { positiveKeywords: keyword })).toEqual([name, url]);
    // Only the default searched columns: categories need the word and the wildcard in one name.
    expect(
      await found(auth, {
        positiveKeywords: JSON.stringify(["*automotive*shop*"]),
        nameIncludeTerms: w,
        orColumns: "aiCategoryEstimation",
      }),
    ).toEqual([category]);
    // A negative keyword with a wildcard.
    expect(
      await found(auth, { positiveKeywords: w, negativeKeywords: JSON.stringify(["*auto*repair*"]) }),
    ).not.toContain(name);
  });

  it("a space is a wildcard in the URL columns only, also together with *", async () => {
    const auth = await account();
    const w = uniqueWord();
    const url = await buildLead(t.ctx.db, { registered_url: `https://${w}-pool-and-spa-repair.com` });
    const literal = await buildLead(t.ctx.db, { company_name: `${w}pool spa repair` });
    await buildLead(t.ctx.db, { company_name: `${w}pool and spa repair` });
    expect(await found(auth, { positiveKeywords: `${w}pool spa*repair` })).toEqual([literal]);
    expect(await found(auth, { positiveKeywords: `${w} pool*repair` })).toEqual([url]);
    expect(await found(auth, { urlIncludeTerms: `${w} spa*repair` })).toEqual([url]);
  });

  it("in column terms: within one value of a column that joins several (phones, e-mails)", async () => {
    const auth = await account();
    const w = uniqueWord();
    const one = await buildLead(t.ctx.db, { company_name: w, email: `info@${w}.com`, email_tier2: "x@y.io" });
    const across = await buildLead(t.ctx.db, {
      company_name: w,
      email: "info@other.com",
      email_tier2: `x@${w}.io`,
    });
    expect(await found(auth, { positiveKeywords: w, emailIncludeTerms: `info@*${w}` })).toEqual([one]);
    expect(await found(auth, { positiveKeywords: w, emailExcludeTerms: `info*${w}` })).toEqual([across]);
    const city = await buildLead(t.ctx.db, { company_name: w, city: "Round Rock" });
    expect(await found(auth, { positiveKeywords: w, cityIncludeTerms: "round*rock" })).toEqual([city]);
    expect(await found(auth, { nameIncludeTerms: `${w}*`, streetIncludeTerms: "*" })).toHaveLength(3);
  });

  it("% and _ stay literal next to a wildcard", async () => {
    const auth = await account();
    const w = uniqueWord();
    const hit = await buildLead(t.ctx.db, { company_name: `${w} 100% organic_farm` });
    await buildLead(t.ctx.db, { company_name: `${w} 1000 organicXfarm` });
    expect(await found(auth, { positiveKeywords: `${w}*100%*organic_farm` })).toEqual([hit]);
  });
});

describe("orColumns and sortBy with the real service's names", () => {
  it("searches each documented column", async () => {
    const auth = await account();
    const w = uniqueWord();
    const lead = leadsOf(`${w}name`);
    const ids = {
      wOgrequestedUrl: await lead({ registered_url: `https://${w}.com` }),
      wSimpleCrawledUrl: await lead({ crawled_url: `https://${w}.net` }),
      wCompanyName: await buildLead(t.ctx.db, { company_name: `${w} co` }),
      aiCategoryEstimation: await lead({ ai_category_estimation: [`${w} shop`] }),
      wProfileDescriptionShort: await lead({ description: `we are ${w}` }),
      wAddressCity: await lead({ city: `${w}ville` }),
      wAddressState: await lead({ state: "WY", description: "WY" }),
      wAddressZip: await lead({ zip: "82001" }),
      wPhonePrimary: await lead({ phone: "(307) 555-0101", phone_secondary: null }),
      wPhoneTotal: await lead({ phone: null, phone_secondary: "(307) 555-0199" }),
      wEmailPrimary: await lead({ email: `a@${w}-primary.com` }),
      wEmailTier1: await lead({ email_tier1: `t1@${w}.com` }),
      wEmailTier6: await lead({ email_tier6: `t6@${w}.com` }),
    };
    const search = (keyword: string, orColumns: string) =>
      found(auth, { positiveKeywords: keyword, orColumns, nameIncludeTerms: `${w}name`, sortBy: "id" });
    // nameIncludeTerms is required (companyName outside orColumns): only this test's leads.
    expect(await search(w, "wOgrequestedUrl")).toEqual([ids.wOgrequestedUrl]);
    expect(await search(w, "wSimpleCrawledUrl")).toEqual([ids.wSimpleCrawledUrl]);
    expect(await search(w, "aiCategoryEstimation")).toEqual([ids.aiCategoryEstimation]);
    expect(await search(w, "wProfileDescriptionShort")).toEqual([ids.wProfileDescriptionShort]);
    expect(await search(w, "wAddressCity")).toEqual([ids.wAddressCity]);
    expect(await search("wy", "wAddressState")).toEqual([ids.wAddressState]);
    expect(await search("8200", "wAddressZip")).toEqual([ids.wAddressZip]);
    expect(await search("(307)", "wPhonePrimary")).toEqual([ids.wPhonePrimary]);
    expect(await search("(307)", "wPhoneTotal")).toEqual([ids.wPhonePrimary, ids.wPhoneTotal]);
    expect(await search(`${w}-primary`, "wEmailPrimary")).toEqual([ids.wEmailPrimary]);
    expect(await search(`t1@${w}`, "wEmailTier1,wEmailTier6")).toEqual([ids.wEmailTier1]);
    expect(await search(w, "wEmailTier1,wEmailTier6")).toEqual([ids.wEmailTier1, ids.wEmailTier6]);
    expect(await search(w, "wEmailPrimary")).toEqual([ids.wEmailPrimary]);
    // Our own names keep their meaning: `phone` either phone, `email` any e-mail field.
    expect(await search("(307)", "phone")).toEqual([ids.wPhonePrimary, ids.wPhoneTotal]);
    expect(await search(`${w}`, "email")).toEqual([ids.wEmailPrimary, ids.wEmailTier1, ids.wEmailTier6]);
    expect(await found(auth, { positiveKeywords: `${w} co`, orColumns: "wCompanyName" })).toEqual([
      ids.wCompanyName,
    ]);
  });

  it("sorts by every documented sortBy name; lists by their text, leads without a value last", async () => {
    const auth = await account();
    const w = uniqueWord();
    const lead = leadsOf(w);
    const a = await lead({
      registration_date: "2024-01-05",
      redirect: true,
      time_scraped: new Date("2026-01-02T00:00:00Z"),
      email_security: ["spf"],
      number_of_locations: 3,
      rating_value: 4.1,
      open_positions: 0,
    });
    const b = await lead({
      registration_date: "2025-03-01",
      redirect: false,
      time_scraped: new Date("2026-05-02T00:00:00Z"),
      email_security: ["dkim", "spf"],
      number_of_locations: 1,
      rating_value: 4.9,
      open_positions: 7,
    });
    const none = await lead({});
    const sorted = (sortBy: string, sortOrder = "asc") =>
      found(auth, { positiveKeywords: w, sortBy, sortOrder });
    expect(await sorted("wProfileDate")).toEqual([a, b, none]);
    expect(await sorted("wProfileDate", "desc")).toEqual([b, a, none]);
    expect(await sorted("wRedirectYn")).toEqual([b, a, none]);
    expect(await sorted("wTimeScraped", "desc")).toEqual([b, a, none]);
    expect(await sorted("wEmailSecurity")).toEqual([b, a, none]);
    expect(await sorted("wNumLocations")).toEqual([b, a, none]);
    expect(await sorted("wRatingValue", "desc")).toEqual([b, a, none]);
    expect(await sorted("wOpenPositions")).toEqual([a, b, none]);
    for (const name of [
      "lastBuyingSignal",
      "lastUpdated",
      "wCompanyName",
      "wOgrequestedUrl",
      "wSimpleCrawledUrl",
      "wAddressCity",
      "wAddressState",
      "wAddressZip",
      "wPhonePrimary",
      "wEmailPrimary",
      "wEmployeeCount",
      "wFoundingDate",
      "wIsChain",
      "wPriceRange",
      "wLegalName",
      "wIndustryNaics",
      "wDuns",
      "wSlogan",
      "wEmailPrimaryMx",
      "wEmailDomainMx",
      "wAddressSource",
      "wReviewCount",
    ]) {
      expect(
        (await sorted(name)).sort((x, y) => x - y),
        name,
      ).toEqual([a, b, none]);
    }
  });
});

describe("search", () => {
  it("is a plain substring of name, URLs, description, city or primary phone, ANDed with the rest", async () => {
    const auth = await account();
    const w = uniqueWord();
    const lead = leadsOf(w);
    const term = "or*ganic cof";
    const hits = [
      await buildLead(t.ctx.db, { company_name: `${w} OR*GANIC COFfee` }),
      await lead({ registered_url: `https://${w}.com/or*ganic cof` }),
      await lead({ crawled_url: `https://or*ganic cof.${w}.com` }),
      await lead({ description: "Fine or*ganic coffee" }),
      await lead({ city: "Or*ganic Cof City" }),
    ];
    await lead({ description: "organic coffee" });
    await lead({ ai_category_estimation: ["or*ganic cof"] });
    await lead({ long_description: "or*ganic cof" });
    await lead({ email: "or*ganic cof@x.com" });
    expect(await found(auth, { positiveKeywords: w, search: term })).toEqual(hits);
    const phone = await lead({ phone: "(512) 555-0199" });
    await lead({ phone: null, phone_secondary: "(512) 555-0199" });
    expect(await found(auth, { positiveKeywords: w, search: "555-0199" })).toEqual([phone]);
    // Not a positive filter.
    expect(() => parseSearchFilters({ search: "coffee" }, "body")).toThrow(/positive filter/);
  });
});

describe("location", () => {
  it("city and street include / exclude are case-insensitive substrings", async () => {
    const auth = await account();
    const w = uniqueWord();
    const lead = leadsOf(w);
    const austin = await lead({ city: "Austin", street: "12 Main St" });
    const east = await lead({ city: "East Austin", street: "4 Oak Ave" });
    const dallas = await lead({ city: "Dallas", street: null });
    const none = await lead({ city: null, street: "9 Main Street" });
    expect(await found(auth, { positiveKeywords: w, cityInclude: "AUSTIN" })).toEqual([austin, east]);
    expect(await found(auth, { positiveKeywords: w, cityInclude: '["east","dal"]' })).toEqual([east, dallas]);
    expect(await found(auth, { positiveKeywords: w, cityExclude: "austin" })).toEqual([dallas, none]);
    expect(await found(auth, { positiveKeywords: w, streetInclude: "main st" })).toEqual([austin, none]);
    expect(await found(auth, { positiveKeywords: w, streetExclude: '["MAIN"]' })).toEqual([east, dallas]);
  });

  it("zip: 5 digits or ZIP+4 select that ZIP, fewer digits a prefix", async () => {
    const auth = await account();
    const w = uniqueWord();
    const lead = leadsOf(w);
    const plain = await lead({ zip: "78701" });
    const plus4 = await lead({ zip: "78701-1234" });
    const other = await lead({ zip: "78702" });
    const none = await lead({ zip: null });
    expect(await found(auth, { positiveKeywords: w, zipInclude: "78701" })).toEqual([plain, plus4]);
    expect(await found(auth, { positiveKeywords: w, zipInclude: "78701-1234" })).toEqual([plus4]);
    expect(await found(auth, { positiveKeywords: w, zipInclude: "787011234" })).toEqual([plus4]);
    expect(await found(auth, { positiveKeywords: w, zipInclude: "7870" })).toEqual([plain, plus4, other]);
    expect(await found(auth, { positiveKeywords: w, zipExclude: '["78701"]' })).toEqual([other, none]);
  });

  it("empty filters: null or blank is empty", async () => {
    const auth = await account();
    const w = uniqueWord();
    const lead = leadsOf(w);
    const full = await lead({
      state: "TX",
      city: "Austin",
      zip: "78701",
      street: "1 Main St",
      description: "x",
    });
    const blank = await lead({ state: null, city: " ", zip: null, street: "", description: null });
    for (const key of ["state", "city", "zip", "street", "description"]) {
      expect(await found(auth, { positiveKeywords: w, [`${key}EmptyFilter`]: "only_empty" }), key).toEqual([
        blank,
      ]);
      expect(await found(auth, { positiveKeywords: w, [`${key}EmptyFilter`]: "exclude_empty" }), key).toEqual(
        [full],
      );
    }
  });
});

describe("dates", () => {
  it("lastBuyingSignalFrom / To are inclusive; a date-only To is the start of that day; old names are aliases", async () => {
    const auth = await account();
    const w = uniqueWord();
    const lead = leadsOf(w);
    const early = await lead({ last_buying_signal: new Date("2026-03-01T00:00:00Z") });
    const later = await lead({ last_buying_signal: new Date("2026-03-01T10:00:00Z") });
    const next = await lead({ last_buying_signal: new Date("2026-03-05T00:00:00Z") });
    await lead({ last_buying_signal: null });
    const q = (extra: Query) => found(auth, { positiveKeywords: w, ...extra });
    expect(await q({ lastBuyingSignalFrom: "2026-03-01T10:00:00Z" })).toEqual([later, next]);
    expect(await q({ lastBuyingSignalTo: "2026-03-01" })).toEqual([early]);
    expect(await q({ lastBuyingSignalFrom: "2026-03-01", lastBuyingSignalTo: "2026-03-05" })).toEqual([
      early,
      later,
      next,
    ]);
    expect(await q({ lastBuyingSignalTo: "2026-03-01T05:00:00-05:00" })).toEqual([early, later]);
    expect(await q({ lastUpdatedFrom: "2026-03-02" })).toEqual([next]);
    expect(await q({ lastUpdatedTo: "2026-03-02" })).toEqual([early, later]);
    // The new name wins over the old one.
    expect(await q({ lastBuyingSignalFrom: "2026-03-02", lastUpdatedFrom: "2020-01-01" })).toEqual([next]);
  });

  it("relative dates count back from the request time", async () => {
    const auth = await account();
    const w = uniqueWord();
    const lead = leadsOf(w);
    const now = Date.now();
    const hour = 3_600_000;
    const recent = await lead({
      last_buying_signal: new Date(now - 2 * hour),
      time_scraped: new Date(now - 2 * hour),
    });
    const week = await lead({ last_buying_signal: new Date(now - 5 * 24 * hour) });
    const months = await lead({ last_buying_signal: new Date(now - 70 * 24 * hour) });
    const years = await lead({ last_buying_signal: new Date(now - 800 * 24 * hour) });
    const q = (extra: Query) => found(auth, { positiveKeywords: w, ...extra });
    expect(await q({ lastBuyingSignalFrom: "rel:3h" })).toEqual([recent]);
    expect(await q({ lastBuyingSignalFrom: "rel:1w" })).toEqual([recent, week]);
    expect(await q({ lastBuyingSignalFrom: "rel:3m", lastBuyingSignalTo: "rel:1d" })).toEqual([week, months]);
    expect(await q({ lastBuyingSignalFrom: "rel:3y", lastBuyingSignalTo: "rel:1y" })).toEqual([years]);
    expect(await q({ lastBuyingSignalFrom: "rel:100000y" })).toEqual([recent, week, months, years]);
    expect(await q({ timeScrapedFrom: "rel:1d" })).toEqual([recent]);
  });

  it("registrationDate and timeScraped: a date-only To includes that whole day", async () => {
    const auth = await account();
    const w = uniqueWord();
    const lead = leadsOf(w);
    const first = await lead({
      registration_date: "2025-06-01",
      time_scraped: new Date("2025-06-01T23:30:00Z"),
    });
    const second = await lead({
      registration_date: "2025-06-02",
      time_scraped: new Date("2025-06-02T00:00:00Z"),
    });
    await lead({ registration_date: null, time_scraped: null });
    const q = (extra: Query) => found(auth, { positiveKeywords: w, ...extra });
    expect(await q({ registrationDateTo: "2025-06-01" })).toEqual([first]);
    expect(await q({ registrationDateFrom: "2025-06-02" })).toEqual([second]);
    expect(
      await q({ registrationDateFrom: "2025-06-01T18:00:00Z", registrationDateTo: "2025-06-02" }),
    ).toEqual([first, second]);
    expect(await q({ timeScrapedTo: "2025-06-01" })).toEqual([first]);
    expect(
      await q({ timeScrapedFrom: "2025-06-01T23:30:00Z", timeScrapedTo: "2025-06-01T23:59:59Z" }),
    ).toEqual([first]);
    expect(await q({ timeScrapedFrom: "2025-06-02" })).toEqual([second]);
  });
});

describe("buying signal types", () => {
  it("keeps leads with any listed type (exact, case-sensitive); spellings of one reason match each other", async () => {
    const auth = await account();
    const w = uniqueWord();
    const lead = leadsOf(w);
    const added = await lead({ buying_signal_type: ["Newly Added"] });
    const phone = await lead({ buying_signal_type: ["Primary Phone", "X (Twitter)"] });
    const real = await lead({ buying_signal_type: ["Phone Primary"] });
    const generated = await lead({ buying_signal_type: ["new_website"] });
    await lead({ buying_signal_type: [] });
    const q = (extra: Query) => found(auth, { positiveKeywords: w, ...extra });
    expect(await q({ buyingSignalTypeFilter: "Newly Added,X (Twitter)" })).toEqual([added, phone]);
    expect(await q({ buyingSignalTypeFilter: '["Phone Primary"]' })).toEqual([phone, real]);
    expect(await q({ buyingSignalTypeFilter: "Primary Phone" })).toEqual([phone, real]);
    expect(await q({ updateReasonFilter: "new_website" })).toEqual([generated]);
    expect(await q({ buyingSignalTypeFilter: "Newly Added", updateReasonFilter: "new_website" })).toEqual([
      added,
    ]);
  });
});

/**
 * A value of each kind of filtered field (`row`), another value (`missRow`), an item that matches
 * the first only (`hit`) and one that matches the second only (`miss`).
 */
function sampleOf(field: (typeof FILTERED_LEAD_FIELDS)[number], w: string) {
  const hit = "+1 (512) 555-0142";
  const other = "(737) 555-0100";
  const phone = { hit: { v: "512-", m: "starts" }, miss: "737" };
  if (field.name === "phoneTotal") {
    return {
      row: { phone: null, phone_secondary: hit },
      missRow: { phone: other, phone_secondary: null },
      ...phone,
    };
  }
  const column = field.column!;
  const rows = (a: unknown, b: unknown) => ({ row: { [column]: a }, missRow: { [column]: b } });
  switch (field.type) {
    case "integer":
      return { ...rows(4242, 4343), hit: { v: "42", m: "ends" }, miss: "43" };
    case "date":
      return { ...rows("2019-04-02", "2020-01-01"), hit: { v: "2019-", m: "starts" }, miss: "2020" };
    case "boolean":
      return { ...rows(true, false), hit: "yes", miss: "false" };
    case "list":
      if (field.name === "founderPhones") return { ...rows(["n/a", hit], [other]), ...phone };
      return { ...rows(["alpha", `${w} Beta`], ["Gamma"]), hit: { v: "beta", m: "ends" }, miss: "gamma" };
    case "object":
      return {
        ...rows(
          JSON.stringify({ facebook: `https://facebook.com/${w}` }),
          JSON.stringify({ x: "https://x.com/facebook.com/x" }),
        ),
        hit: { v: "https://facebook.com/", m: "starts" },
        miss: "facebook.com/x",
      };
    default:
      if (field.name === "phone" || field.name === "phoneSecondary") return { ...rows(hit, other), ...phone };
      return { ...rows(`${w} Value*`, `${w} Value**`), hit: { v: "value*", m: "ends" }, miss: "value**" };
  }
}

/** The value a lead without this field's value has. */
function emptyOf(field: (typeof FILTERED_LEAD_FIELDS)[number]): LeadInput {
  if (field.name === "phoneTotal") return { phone: " ", phone_secondary: null };
  const column = field.column!;
  if (field.type === "list") return { [column]: [] };
  if (field.type === "object") return { [column]: JSON.stringify({}) };
  return { [column]: null };
}

describe("contact and company-detail term filters", () => {
  it("every field's Include, Exclude and EmptyFilter, in the query's JSON-array form", async () => {
    const auth = await account();
    for (const field of FILTERED_LEAD_FIELDS) {
      const w = uniqueWord();
      const sample = sampleOf(field, w);
      const lead = leadsOf(w);
      const hit = await lead(sample.row as LeadInput);
      const empty = await lead(emptyOf(field));
      const miss = await lead(sample.missRow as LeadInput);
      const key = field.filterKey;
      const q = (extra: Query) => found(auth, { positiveKeywords: w, ...extra });
      const list = (item: unknown) => JSON.stringify([item]);
      expect(await q({ [`${key}Include`]: list(sample.hit) }), `${key}Include`).toEqual([hit]);
      expect(await q({ [`${key}Include`]: list(sample.miss) }), `${key}Include miss`).toEqual([miss]);
      expect(await q({ [`${key}Exclude`]: list(sample.hit) }), `${key}Exclude`).toEqual([empty, miss]);
      expect(await q({ [`${key}EmptyFilter`]: "only_empty" }), `${key}EmptyFilter`).toEqual([empty]);
      expect(await q({ [`${key}EmptyFilter`]: "exclude_empty" }), `${key}EmptyFilter`).toEqual([hit, miss]);
    }
  });

  it("phones compare digits: (512), 512- and 512 all start +1 512 555 0142", async () => {
    const auth = await account();
    const w = uniqueWord();
    const lead = leadsOf(w);
    const intl = await lead({ phone: "+1 512 555 0142", phone_secondary: null });
    const local = await lead({ phone: "512.555.0199", phone_secondary: "(737) 555-0142" });
    const third = await lead({ phone: "(737) 512-0100", phone_secondary: null });
    const q = (extra: Query) => found(auth, { positiveKeywords: w, ...extra });
    for (const v of ["(512)", "512-", "512", "+1 512", "1-512-555-0142"]) {
      expect(await q({ phonePrimaryInclude: JSON.stringify([{ v, m: "starts" }]) }), v).toEqual(
        v === "1-512-555-0142" ? [intl] : [intl, local],
      );
    }
    expect(await q({ phonePrimaryInclude: JSON.stringify([{ v: "0142", m: "ends" }]) })).toEqual([intl]);
    expect(await q({ phoneTotalInclude: JSON.stringify([{ v: "0142", m: "ends" }]) })).toEqual([intl, local]);
    expect(await q({ phoneTotalExclude: JSON.stringify(["555-0142"]) })).toEqual([third]);
    // Items sent one by one (as generated clients send an array): an object item's commas stay.
    const items = [
      JSON.stringify({ v: "0199", m: "ends" }),
      JSON.stringify({ v: "+1 512 555", m: "starts" }),
    ];
    expect(await q({ phonePrimaryInclude: items.join(",") })).toEqual([intl, local]);
    // The repeated form reads the same items.
    const repeated = parseSearchFilters(
      `?positiveKeywords=${w}&${items.map((i) => `phonePrimaryInclude=${encodeURIComponent(i)}`).join("&")}`,
      "query",
    );
    expect(repeated.fieldTerms.phonePrimary!.include).toEqual([
      { v: "0199", m: "ends" },
      { v: "+1 512 555", m: "starts" },
    ]);
    await t
      .request()
      .get(
        `/api/v1/leads/preview?positiveKeywords=${w}&negativeKeywords=*&${items
          .map((i) => `phonePrimaryInclude=${encodeURIComponent(i)}`)
          .join("&")}`,
      )
      .set(auth)
      .expect(200);
  });

  it("* is literal; items are case-insensitive; contains, starts and ends", async () => {
    const auth = await account();
    const w = uniqueWord();
    const lead = leadsOf(w);
    const star = await lead({ email: `Sales*Team@${w}.COM`, legal_name: "Acme*Holdings LLC" });
    await lead({ email: `salesXteam@${w}.com`, legal_name: "AcmeXHoldings LLC" });
    const q = (extra: Query) => found(auth, { positiveKeywords: w, ...extra });
    expect(await q({ emailPrimaryInclude: JSON.stringify(["s*t"]) })).toEqual([star]);
    expect(await q({ emailPrimaryInclude: JSON.stringify([{ v: "SALES*", m: "starts" }]) })).toEqual([star]);
    expect(await q({ legalNameInclude: JSON.stringify([{ v: "e*holdings llc", m: "ends" }]) })).toEqual([
      star,
    ]);
    expect(await q({ legalNameInclude: JSON.stringify([{ v: "holdings", m: "starts" }]) })).toEqual([]);
  });
});

describe("company details", () => {
  it("numeric ranges are inclusive and leave out leads without a value", async () => {
    const auth = await account();
    const w = uniqueWord();
    const lead = leadsOf(w);
    const small = await lead({
      number_of_locations: 1,
      open_positions: 0,
      rating_value: 3.2,
      review_count: 4,
    });
    const big = await lead({
      number_of_locations: 12,
      open_positions: 9,
      rating_value: 4.8,
      review_count: 300,
    });
    const none = await lead({
      number_of_locations: null,
      open_positions: null,
      rating_value: null,
      review_count: null,
    });
    const q = (extra: Query) => found(auth, { positiveKeywords: w, ...extra });
    expect(await q({ minNumLocations: 2 })).toEqual([big]);
    expect(await q({ maxNumLocations: 1 })).toEqual([small]);
    expect(await q({ minOpenPositions: 0, maxOpenPositions: 9 })).toEqual([small, big]);
    expect(await q({ maxOpenPositions: 0 })).toEqual([small]);
    expect(await q({ openPositionsEmptyFilter: "only_empty" })).toEqual([none]);
    expect(await q({ openPositionsEmptyFilter: "exclude_empty" })).toEqual([small, big]);
    expect(await q({ minRatingValue: 4.5 })).toEqual([big]);
    expect(await q({ maxRatingValue: 3.2 })).toEqual([small]);
    expect(await q({ minReviewCount: 5, maxReviewCount: 300 })).toEqual([big]);
  });

  it("value lists are exact and case-insensitive; email security matches any item", async () => {
    const auth = await account();
    const w = uniqueWord();
    const lead = leadsOf(w);
    const google = await lead({
      email_primary_mx: "google.com",
      email_domain_mx: "outlook.com",
      email_security: ["spf", "dmarc"],
      address_source: "google_maps",
    });
    const other = await lead({
      email_primary_mx: "mail.google.com",
      email_domain_mx: "zoho.com",
      email_security: ["none"],
      address_source: "website",
    });
    const none = await lead({});
    const q = (extra: Query) => found(auth, { positiveKeywords: w, ...extra });
    expect(await q({ emailPrimaryMxValues: '["Google.com","outlook.com"]' })).toEqual([google]);
    expect(await q({ emailDomainMxValues: "zoho.com" })).toEqual([other]);
    expect(await q({ emailSecurityValues: '["DMARC","bimi"]' })).toEqual([google]);
    expect(await q({ addressSourceValues: "website,google_maps" })).toEqual([google, other]);
    for (const key of ["emailPrimaryMx", "emailDomainMx", "emailSecurity", "addressSource"]) {
      expect(await q({ [`${key}EmptyFilter`]: "only_empty" }), key).toEqual([none]);
      expect(await q({ [`${key}EmptyFilter`]: "exclude_empty" }), key).toEqual([google, other]);
    }
  });

  it("websiteSchemaFilter matches substrings of any schema type; redirectFilter no includes leads without a value", async () => {
    const auth = await account();
    const w = uniqueWord();
    const lead = leadsOf(w);
    const plumber = await lead({ website_schema_types: ["LocalBusiness", "Plumber"], redirect: true });
    const dentist = await lead({ website_schema_types: ["Dentist"], redirect: false });
    const none = await lead({ website_schema_types: [], redirect: null });
    const q = (extra: Query) => found(auth, { positiveKeywords: w, ...extra });
    expect(await q({ websiteSchemaFilter: "plumb" })).toEqual([plumber]);
    expect(await q({ websiteSchemaFilter: "Dentist,localbusiness" })).toEqual([plumber, dentist]);
    expect(await q({ websiteSchemaFilter: '["business"]' })).toEqual([plumber]);
    expect(await q({ redirectFilter: "yes" })).toEqual([plumber]);
    expect(await q({ redirectFilter: "no" })).toEqual([dentist, none]);
  });
});

describe("bad input: 400 validation_error with details naming the parameter, nothing charged", () => {
  const long = "x".repeat(501);
  const cases: [string, Query, string][] = [
    ["an invalid date", { lastBuyingSignalFrom: "2026-13-01" }, "lastBuyingSignalFrom"],
    ["a date that is not a date", { registrationDateTo: "yesterday" }, "registrationDateTo"],
    ["February 30", { timeScrapedFrom: "2026-02-30" }, "timeScrapedFrom"],
    ["a time past 23:59", { lastUpdatedTo: "2026-01-01T24:00:00Z" }, "lastUpdatedTo"],
    ["rel:0d", { lastBuyingSignalFrom: "rel:0d" }, "lastBuyingSignalFrom"],
    ["rel with an unknown unit", { lastBuyingSignalFrom: "rel:3q" }, "lastBuyingSignalFrom"],
    ["rel past 100000", { registrationDateFrom: "rel:100001d" }, "registrationDateFrom"],
    [
      "From after To",
      { lastBuyingSignalFrom: "2026-02-01", lastBuyingSignalTo: "2026-01-01" },
      "lastBuyingSignalFrom",
    ],
    [
      "an unknown buying signal type",
      { buyingSignalTypeFilter: "Newly Added,Moved" },
      "buyingSignalTypeFilter",
    ],
    ["a type in the wrong case", { updateReasonFilter: "newly added" }, "updateReasonFilter"],
    ["an unknown match mode", { phonePrimaryInclude: '[{"v":"512","m":"middle"}]' }, "phonePrimaryInclude"],
    ["an item without v", { legalNameExclude: '[{"m":"starts"}]' }, "legalNameExclude"],
    ["an item with another member", { brandInclude: '[{"v":"a","x":1}]' }, "brandInclude"],
    ["a malformed object item", { brandInclude: '{"v":"a"' }, "brandInclude"],
    ["an item over 500 characters", { sloganInclude: long }, "sloganInclude"],
    ["a ZIP with letters", { zipInclude: "7870A" }, "zipInclude"],
    ["a six-digit ZIP", { zipExclude: "787011" }, "zipExclude"],
    ["min above max", { minNumLocations: 5, maxNumLocations: 2 }, "minNumLocations"],
    ["min stars above max stars", { minStars: 4, maxStars: 3 }, "minStars"],
    ["a negative count", { minOpenPositions: -1 }, "minOpenPositions"],
    ["a decimal count", { maxNumLocations: 1.5 }, "maxNumLocations"],
    ["a rating that is text", { minRatingValue: "high" }, "minRatingValue"],
    ["an unknown empty filter value", { cityEmptyFilter: "maybe" }, "cityEmptyFilter"],
    ["an unknown term empty filter value", { dunsEmptyFilter: "empty" }, "dunsEmptyFilter"],
    ["an unknown redirect value", { redirectFilter: "Y" }, "redirectFilter"],
    ["an unknown orColumns name", { orColumns: "wOgrequestedUrl,wNope" }, "orColumns"],
    ["an object field as sortBy", { sortBy: "wSocialProfiles" }, "sortBy"],
    ["search over 500 characters", { search: long }, "search"],
  ];
  for (const [name, query, parameter] of cases) {
    it(name, async () => {
      const { accountId, auth } = await buildAccount(t.ctx.db);
      for (const endpoint of ["/api/v1/leads", "/api/v1/leads/preview"]) {
        const res = await t
          .request()
          .get(endpoint)
          .query({ positiveKeywords: "x", ...query })
          .set(auth);
        expect(res.status, JSON.stringify(res.body)).toBe(400);
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
    });
  }
});

describe("the contract", () => {
  it("accepts every query the tests above ran, on GET /leads and preview", async () => {
    expect(ran.length).toBeGreaterThan(100);
    const { auth } = await buildAccount(t.ctx.db);
    for (const query of ran) {
      // A negative keyword that removes every lead: the answer holds no lead to present.
      const res = await t
        .request()
        .get("/api/v1/leads/preview")
        .query({ ...query, negativeKeywords: "*" })
        .set(auth);
      expect(res.status, `${JSON.stringify(query)}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.data.pagination.total).toBe(0);
    }
  }, 180_000);

  const doc = parse(readFileSync(new URL("../openapi.yaml", import.meta.url), "utf8")) as {
    paths: Record<string, { get: { parameters: ({ name: string } | { $ref: string })[] } }>;
    components: { schemas: Record<string, { properties: Record<string, unknown> }> };
  };
  const queryNames = doc.paths["/api/v1/leads"]!.get.parameters.map((p) =>
    "name" in p ? p.name : p.$ref.split("/").pop()!,
  );
  const bodyNames = Object.keys(doc.components.schemas.LeadSearchFilters!.properties);

  it("declares every term filter of the field catalogue, in both forms", () => {
    const termNames = FILTERED_LEAD_FIELDS.flatMap((f) =>
      ["Include", "Exclude", "EmptyFilter"].map((s) => `${f.filterKey}${s}`),
    );
    expect(termNames.length).toBe(34 * 3);
    expect(queryNames).toEqual(expect.arrayContaining(termNames));
    expect(bodyNames).toEqual(expect.arrayContaining(termNames));
    // ... and nothing else ending like a term filter.
    const declared = bodyNames.filter(
      (n) => /(Include|Exclude)$/.test(n) && !/^(state|city|zip|street)/.test(n),
    );
    expect(declared.sort()).toEqual(termNames.filter((n) => !n.endsWith("EmptyFilter")).sort());
  });

  it("declares every parameter of REFERENCE.md section 2 (besides the charging ones)", () => {
    const documented = [
      "page",
      "limit",
      "sortBy",
      "sortOrder",
      "database",
      "positiveKeywords",
      "negativeKeywords",
      "orColumns",
      "nameIncludeTerms",
      "nameExcludeTerms",
      "urlIncludeTerms",
      "urlExcludeTerms",
      "crawledUrlIncludeTerms",
      "crawledUrlExcludeTerms",
      "descriptionIncludeTerms",
      "descriptionExcludeTerms",
      "search",
      "stateInclude",
      "stateExclude",
      "cityInclude",
      "cityExclude",
      "zipInclude",
      "zipExclude",
      "streetInclude",
      "streetExclude",
      "stateEmptyFilter",
      "cityEmptyFilter",
      "zipEmptyFilter",
      "streetEmptyFilter",
      "lastBuyingSignalFrom",
      "lastBuyingSignalTo",
      "lastUpdatedFrom",
      "lastUpdatedTo",
      "buyingSignalTypeFilter",
      "updateReasonFilter",
      "registrationDateFrom",
      "registrationDateTo",
      "timeScrapedFrom",
      "timeScrapedTo",
      "descriptionEmptyFilter",
      "minNumLocations",
      "maxNumLocations",
      "minOpenPositions",
      "maxOpenPositions",
      "openPositionsEmptyFilter",
      "minRatingValue",
      "maxRatingValue",
      "minReviewCount",
      "maxReviewCount",
      "emailPrimaryMxValues",
      "emailDomainMxValues",
      "emailSecurityValues",
      "addressSourceValues",
      "emailPrimaryMxEmptyFilter",
      "emailDomainMxEmptyFilter",
      "emailSecurityEmptyFilter",
      "addressSourceEmptyFilter",
      "websiteSchemaFilter",
      "redirectFilter",
    ];
    expect(queryNames).toEqual(expect.arrayContaining(documented));
    expect(bodyNames).toEqual(expect.arrayContaining(documented));
  });
});

describe("the body form (export filters, presets)", () => {
  it("takes comma strings (trimmed) and JSON-array strings where the real service does, and term objects", () => {
    const f = parseSearchFilters(
      {
        positiveKeywords: '["*dental*","*dentist*"]',
        negativeKeywords: '["*franchise*"]',
        orColumns: '["wCompanyName","wOgrequestedUrl"]',
        stateInclude: "FL, GA",
        buyingSignalTypeFilter: "Newly Added, Instagram",
        websiteSchemaFilter: "Dentist, LocalBusiness",
        phonePrimaryInclude: ["(512)", { v: "0142", m: "ends" }],
        lastBuyingSignalFrom: "rel:30d",
        maxResults: 5,
      },
      "body",
    );
    expect(f.positiveKeywords).toEqual(["*dental*", "*dentist*"]);
    expect(f.negativeKeywords).toEqual(["*franchise*"]);
    expect(f.orColumns).toEqual(["companyName", "registeredUrl"]);
    expect(f.stateInclude).toEqual(["FL", "GA"]);
    expect(f.buyingSignalTypes).toEqual(["Newly Added", "Instagram"]);
    expect(f.websiteSchemaFilter).toEqual(["Dentist", "LocalBusiness"]);
    expect(f.fieldTerms.phonePrimary!.include).toEqual([
      { v: "(512)", m: "contains" },
      { v: "0142", m: "ends" },
    ]);
    // A comma string is not a keyword list; a term list takes arrays only.
    const paths = (input: object) => {
      try {
        parseSearchFilters(input, "body");
      } catch (err) {
        return (err as { details: { path: string[] }[] }).details.map((d) => d.path.join("."));
      }
      return [];
    };
    expect(paths({ positiveKeywords: "a,b" })).toEqual(["body.positiveKeywords"]);
    expect(paths({ positiveKeywords: ["a"], legalNameInclude: "LLC" })).toEqual(["body.legalNameInclude"]);
    expect(paths({ positiveKeywords: ["a"], legalNameInclude: [3] })).toEqual(["body.legalNameInclude"]);
    expect(paths({ positiveKeywords: ["a"], minNumLocations: "3" })).toEqual(["body.minNumLocations"]);
  });

  it("every parameter round-trips through the canonical form; relative dates stay relative", () => {
    const now = new Date("2026-11-01T12:00:00Z");
    const input = {
      positiveKeywords: ["*auto*repair*"],
      negativeKeywords: ["*franchise*"],
      orColumns: ["wPhoneTotal", "wEmailTier3", "wAddressZip", "wCompanyName"],
      nameIncludeTerms: ["a"],
      streetExcludeTerms: ["suite"],
      search: "coffee",
      stateInclude: ["TX"],
      cityInclude: ["austin"],
      cityExclude: ["round"],
      zipInclude: ["78701", "787"],
      zipExclude: ["78702-1234"],
      streetInclude: ["main"],
      streetExclude: ["box"],
      stateEmptyFilter: "exclude_empty",
      descriptionEmptyFilter: "only_empty",
      lastBuyingSignalFrom: "rel:30d",
      lastBuyingSignalTo: "rel:1d",
      registrationDateFrom: "2020-01-01T00:00:00Z",
      registrationDateTo: "2026-10-31",
      timeScrapedTo: "rel:1h",
      buyingSignalTypeFilter: ["Newly Added"],
      phonePrimaryInclude: ["512", { v: "0142", m: "ends" }],
      legalNameExclude: [{ v: "inc", m: "starts" }],
      isChainEmptyFilter: "exclude_empty",
      minNumLocations: 1,
      maxNumLocations: 4,
      minOpenPositions: 0,
      openPositionsEmptyFilter: "exclude_empty",
      minRatingValue: 3.5,
      maxStars: 5,
      minReviewCount: 2,
      emailPrimaryMxValues: ["google.com"],
      emailSecurityValues: ["spf"],
      addressSourceEmptyFilter: "only_empty",
      websiteSchemaFilter: ["Dent"],
      redirectFilter: "no",
      sortBy: "wEmailSecurity",
      sortOrder: "asc",
    };
    const f = parseSearchFilters(input, "body", { now });
    const json = searchFiltersToJson(f);
    expect(json).toMatchObject({
      ...input,
      orColumns: ["phoneTotal", "emailTier3", "zip", "companyName"],
      phonePrimaryInclude: ["512", { v: "0142", m: "ends" }],
      sortBy: "websiteEmailSecurity",
    });
    expect(parseSearchFilters(json, "body", { now })).toEqual(f);
    // Replayed later, a relative bound moves with the time.
    const later = parseSearchFilters(json, "body", { now: new Date("2026-12-01T12:00:00Z") });
    expect(later.dates.lastBuyingSignal!.from!.at.toISOString()).toBe("2026-11-01T12:00:00.000Z");
    // The old names are stored under the new ones.
    const old = searchFiltersToJson(
      parseSearchFilters(
        { positiveKeywords: ["a"], lastUpdatedFrom: "rel:7d", updateReasonFilter: "Yelp" },
        "body",
      ),
    );
    expect(old).toMatchObject({ lastBuyingSignalFrom: "rel:7d", buyingSignalTypeFilter: ["Yelp"] });
    expect(old).not.toHaveProperty("lastUpdatedFrom");
  });

  it("a preset stores term objects, comma strings and relative dates as sent to the contract", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .post("/api/v1/filter-presets")
      .set(auth)
      .send({
        name: "dentists",
        filters: {
          positiveKeywords: '["*dental*"]',
          stateInclude: "TX, OK",
          emailPrimaryInclude: [{ v: "@gmail.com", m: "ends" }],
          lastBuyingSignalFrom: "rel:30d",
        },
      })
      .expect(201);
    expect(res.body.data.filters).toMatchObject({
      positiveKeywords: ["*dental*"],
      stateInclude: ["TX", "OK"],
      emailPrimaryInclude: [{ v: "@gmail.com", m: "ends" }],
      lastBuyingSignalFrom: "rel:30d",
    });
    const bad = await t
      .request()
      .post("/api/v1/filter-presets")
      .set(auth)
      .send({ name: "bad", filters: { positiveKeywords: ["a"], lastBuyingSignalFrom: "last week" } })
      .expect(400);
    expect(bad.body.details).toContainEqual({
      path: ["body", "filters", "lastBuyingSignalFrom"],
      message: expect.any(String),
    });
  });
});
