import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { generateLeads } from "../src/leads/import/generate.js";
import { importLeadRecords } from "../src/leads/import/importer.js";
import { parseSearchFilters } from "../src/leads/search/filters.js";
import { searchPageQuery, searchTableServes } from "../src/leads/search/query.js";
import { orderSearchTableByState, SEARCH_TABLE_FILLFACTOR } from "../src/db/search-table-order.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLead, markReceived, uniqueWord } from "./helpers/leads-factories.js";

// Broad and narrow searches served by the narrow table `lead_search` (docs/search.md) return the
// same pages and totals as a straightforward reference (the lead search model written out in
// TypeScript over every lead) and as the query over `leads` used before the table existed.

const t = useTestApp();

const LEADS = 3_000;
const SEED = 21;

/** The columns the reference reads. */
interface RefLead {
  id: number;
  registered_url: string | null;
  crawled_url: string | null;
  company_name: string | null;
  ai_category_estimation: string[] | null;
  state: string | null;
  last_buying_signal: Date | null;
}

/** The parts in order within `text`, anything between (the wildcards). */
function partsInOrder(text: string, parts: string[]): boolean {
  let from = 0;
  for (const part of parts) {
    const at = text.indexOf(part, from);
    if (at < 0) return false;
    from = at + part.length;
  }
  return true;
}

/**
 * A term over the four searched columns, as docs/leads.md says (the data is ASCII): `*` is any
 * run of characters within one value (one URL, the name, one category), and in the URL columns
 * so is a space.
 */
function termMatches(lead: RefLead, term: string): boolean {
  const t = term.toLowerCase();
  const urlParts = t.split(/[*\s]+/).filter(Boolean);
  const literalParts = t.split(/\*+/).filter(Boolean);
  const urls = [lead.registered_url, lead.crawled_url].map((v) => (v ?? "").toLowerCase());
  const literal = [lead.company_name ?? "", ...(lead.ai_category_estimation ?? [])].map((v) =>
    v.toLowerCase(),
  );
  return urls.some((u) => partsInOrder(u, urlParts)) || literal.some((v) => partsInOrder(v, literalParts));
}

interface RefQuery {
  positive: string[];
  negative?: string[];
  stateInclude?: string[];
  stateExclude?: string[];
  sortBy?: "lastBuyingSignal" | "id";
  sortOrder?: "asc" | "desc";
}

/** Every match of a query, in result order. */
function reference(leads: RefLead[], q: RefQuery): RefLead[] {
  const include = (q.stateInclude ?? []).map((s) => s.toUpperCase());
  const exclude = (q.stateExclude ?? []).map((s) => s.toUpperCase());
  const matches = leads.filter(
    (lead) =>
      q.positive.some((term) => termMatches(lead, term)) &&
      !(q.negative ?? []).some((term) => termMatches(lead, term)) &&
      (include.length === 0 || include.includes((lead.state ?? "").toUpperCase())) &&
      !exclude.includes((lead.state ?? "").toUpperCase()),
  );
  const dir = q.sortOrder === "asc" ? 1 : -1;
  const key = (lead: RefLead) => (q.sortBy === "id" ? lead.id : (lead.last_buying_signal?.getTime() ?? null));
  return matches.sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    if (ka !== kb) {
      if (ka === null) return 1; // nulls last in both directions
      if (kb === null) return -1;
      return (ka - kb) * dir;
    }
    return (a.id - b.id) * dir;
  });
}

function queryString(q: RefQuery, page: number, limit: number): string {
  const params = new URLSearchParams({ positiveKeywords: JSON.stringify(q.positive) });
  if (q.negative) params.set("negativeKeywords", JSON.stringify(q.negative));
  if (q.stateInclude) params.set("stateInclude", q.stateInclude.join(","));
  if (q.stateExclude) params.set("stateExclude", q.stateExclude.join(","));
  if (q.sortBy) params.set("sortBy", q.sortBy);
  if (q.sortOrder) params.set("sortOrder", q.sortOrder);
  params.set("page", String(page));
  params.set("limit", String(limit));
  return params.toString();
}

async function allLeads(): Promise<RefLead[]> {
  return t.ctx.db
    .selectFrom("leads")
    .select([
      "id",
      "registered_url",
      "crawled_url",
      "company_name",
      "ai_category_estimation",
      "state",
      "last_buying_signal",
    ])
    .execute();
}

/** Runs the search query (from `lead_search`, or from `leads` as before) for one page. */
/** The result-list options of a paid search with cost controls (newFirst) or excludePurchased (onlyNew). */
type ListOptions = { newFirst?: boolean; onlyNew?: boolean };

async function sqlPage(
  query: string,
  accountId: number,
  useSearchTable: boolean,
  cap: number | null = null,
  list: ListOptions = {},
) {
  const filters = parseSearchFilters(query, "query");
  const { rows } = await searchPageQuery(filters, { accountId, cap, useSearchTable, ...list }).execute(
    t.ctx.db,
  );
  return {
    total: rows[0]?.total_matches ?? 0,
    newMatches: rows[0]?.new_matches ?? 0,
    ids: rows.flatMap((r) => (r.page_id === null ? [] : [r.page_id])),
  };
}

/** Whether the search query collected every match (its `matches` CTE ran), from its plan as run. */
async function collectedMatches(
  query: string,
  accountId: number,
  cap: number | null,
  list: ListOptions = {},
): Promise<boolean> {
  const compiled = searchPageQuery(parseSearchFilters(query, "query"), { accountId, cap, ...list }).compile(
    t.ctx.db,
  );
  const { rows } = await t.ctx.pool.query<{ "QUERY PLAN": unknown }>(
    `explain (analyze, format json) ${compiled.sql}`,
    compiled.parameters as unknown[],
  );
  const loops: number[] = [];
  const visit = (node: Record<string, unknown>) => {
    if (node["Subplan Name"] === "CTE matches") loops.push(Number(node["Actual Loops"]));
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) visit(child);
  };
  visit((rows[0]!["QUERY PLAN"] as { Plan: Record<string, unknown> }[])[0]!.Plan);
  expect(loops).toHaveLength(1);
  return loops[0]! > 0;
}

/** Rows of `lead_search` that differ from what `leads` says they should be (both directions). */
async function searchTableDrift(): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    with expected as (
      select id, search_text, upper(state) as state, last_buying_signal,
        coalesce(btrim(email), '') <> '' as has_email, coalesce(btrim(phone), '') <> '' as has_phone,
        company_name
      from leads),
    held as (
      select id, search_text, state, last_buying_signal, has_email, has_phone, company_name from lead_search)
    select count(*)::int as n from (
      (select * from expected except select * from held)
      union all
      (select * from held except select * from expected)
    ) d`.execute(t.ctx.db);
  return rows[0]!.n;
}

const SHAPES: RefQuery[] = [
  // The issue's slowest broad search, and broad ones like it.
  { positive: ["repair", "paint"], negative: ["pros"] },
  { positive: ["plumb", "roof"], negative: ["llc"] },
  { positive: ["law", "tree"], negative: ["the"] },
  // Narrow: with states.
  { positive: ["plumb", "roof"], negative: ["llc"], stateInclude: ["tx", "CA"] },
  { positive: ["family"], stateExclude: ["CA", "NY"], sortBy: "id", sortOrder: "asc" },
  // Spaces: a wildcard in the URL columns only.
  { positive: ["car wash", "eye care"], negative: ["the"] },
  { positive: ["pool repair", "bbq"], negative: ["https www"] },
  // Case, LIKE's special characters, a term in most leads.
  { positive: ["PREMIER", "Golden"], negative: ["CO."], sortOrder: "asc" },
  { positive: ["100%", "a_b", "auto"], negative: ["\\"] },
  { positive: ["https://www."], negative: ["com"], sortBy: "id", sortOrder: "desc" },
  // Wildcards: within one value (a category, not across two of them), with spaces, with states.
  { positive: ["*roof*repair*", "*air*repair*", "*s*ing*"], negative: ["*llc*"] },
  { positive: ["*dent*", "*plumb*dr*"], stateInclude: ["TX", "CA", "FL"] },
  { positive: ["roof *repair", "*storm*"], negative: ["co*pros"] },
  { positive: ["*home*serv*"], stateExclude: ["TX"], sortBy: "id", sortOrder: "desc" },
  { positive: ["*"], negative: ["*a*e*i*", "https www*com"], sortOrder: "asc" },
  { positive: ["100%*", "a_b*c", "*_*"] },
];

describe("searches served by lead_search", () => {
  let leads: RefLead[];
  let accountId: number;
  let auth: { Authorization: string };

  beforeAll(async () => {
    await importLeadRecords(t.ctx.db, generateLeads(LEADS, SEED));
    // Ties and missing values of the sort key (through the update trigger).
    await sql`update leads set last_buying_signal = null where id % 11 = 0`.execute(t.ctx.db);
    await sql`update leads set last_buying_signal = '2026-01-01T00:00:00Z' where id % 13 = 0`.execute(
      t.ctx.db,
    );
    leads = await allLeads();
    ({ accountId, auth } = await buildAccount(t.ctx.db, { plan: "enterprise" }));
    // Some leads already received, so new and received matches differ.
    await markReceived(
      t.ctx.db,
      accountId,
      leads.filter((l) => l.id % 7 === 0).map((l) => l.id),
    );
  });

  it("the table holds exactly the searched values of every lead", async () => {
    expect(leads.length).toBe(LEADS);
    expect(await searchTableDrift()).toBe(0);
  });

  it("every shape returns the reference's total, new matches and pages, as the query over leads did", async () => {
    const limit = 25;
    let nonEmpty = 0;
    for (const shape of SHAPES) {
      const expected = reference(leads, shape);
      if (expected.length > limit * 2) nonEmpty += 1;
      const received = expected.filter((l) => l.id % 7 === 0).length;
      const lastPage = Math.max(1, Math.ceil(expected.length / limit));
      for (const page of new Set([1, 2, lastPage, lastPage + 1])) {
        const query = queryString(shape, page, limit);
        expect(searchTableServes(parseSearchFilters(query, "query")), query).toBe(true);
        const want = {
          total: expected.length,
          newMatches: expected.length - received,
          ids: expected.slice((page - 1) * limit, page * limit).map((l) => l.id),
        };
        expect(await sqlPage(query, accountId, true), query).toEqual(want);
        expect(await sqlPage(query, accountId, false), query).toEqual(want);
      }
    }
    // The shapes are broad on this data set: most have pages of matches to compare.
    expect(nonEmpty).toBeGreaterThanOrEqual(10);
    // The wildcard shapes tell a match within one value from one across values: `*roof*repair*`
    // over the categories joined would also take `Roofing` ... `Storm Damage Repair`.
    const roofRepair = (lead: RefLead) => termMatches(lead, "*roof*repair*");
    const across = (lead: RefLead) =>
      (lead.ai_category_estimation ?? [])
        .join(" ")
        .toLowerCase()
        .match(/roof.*repair/);
    expect(leads.filter((l) => !roofRepair(l) && across(l)).length).toBeGreaterThan(5);
  });

  it("a page found by walking the sort order equals the reference's, capped or not, on every page", async () => {
    // Broad shapes (no state to include): a first page is found by walking lead_search in sort
    // order, a deep one or a sparse shape's collects the matches; either way the same list.
    let walked = 0;
    let collected = 0;
    for (const shape of SHAPES.filter((s) => !s.stateInclude)) {
      const expected = reference(leads, shape);
      for (const limit of [10, 40]) {
        const lastPage = Math.max(1, Math.ceil(expected.length / limit));
        for (const page of new Set([1, 2, lastPage])) {
          for (const cap of [null, 0, 7, 45]) {
            const query = queryString(shape, page, limit);
            // The result list: every received match, and the first `cap` new ones.
            let newSeen = 0;
            const list = expected.filter((l) => l.id % 7 === 0 || cap === null || newSeen++ < cap);
            const received = expected.filter((l) => l.id % 7 === 0).length;
            expect(await sqlPage(query, accountId, true, cap), `${query} cap ${cap}`).toEqual({
              total: expected.length,
              newMatches: expected.length - received,
              ids: list.slice((page - 1) * limit, page * limit).map((l) => l.id),
            });
            if (await collectedMatches(query, accountId, cap)) collected += 1;
            else walked += 1;
          }
        }
      }
    }
    expect(walked).toBeGreaterThan(20);
    expect(collected).toBeGreaterThan(20);
  }, 180_000);

  it("a page walked for new leads first (maxCredits, maxResults) or new leads only (excludePurchased) equals the reference's", async () => {
    // With newFirst the result list is the first `cap` new matches, then every received one; with
    // onlyNew only the first `cap` new matches. Either way the walk skips received leads.
    let walked = 0;
    let collected = 0;
    for (const shape of SHAPES.filter((s) => !s.stateInclude)) {
      const expected = reference(leads, shape);
      const fresh = expected.filter((l) => l.id % 7 !== 0);
      const received = expected.filter((l) => l.id % 7 === 0);
      for (const list of [{ newFirst: true }, { onlyNew: true }, { newFirst: true, onlyNew: true }]) {
        for (const page of [1, 2]) {
          for (const cap of [null, 5, 45]) {
            const limit = 10;
            const query = queryString(shape, page, limit);
            const newOnes = cap === null ? fresh : fresh.slice(0, cap);
            const all = list.onlyNew ? newOnes : [...newOnes, ...received];
            expect(
              await sqlPage(query, accountId, true, cap, list),
              `${query} cap ${cap} ${JSON.stringify(list)}`,
            ).toEqual({
              total: list.onlyNew ? fresh.length : expected.length,
              newMatches: fresh.length,
              ids: all.slice((page - 1) * limit, page * limit).map((l) => l.id),
            });
            if (await collectedMatches(query, accountId, cap, list)) collected += 1;
            else walked += 1;
          }
        }
      }
    }
    expect(walked).toBeGreaterThan(10);
    expect(collected).toBeGreaterThan(10);
  }, 180_000);

  it("walks for the first page of a broad search, and collects the matches of a deep page", async () => {
    const broad: RefQuery = { positive: ["repair", "paint"], negative: ["pros"] };
    expect(reference(leads, broad).length).toBeGreaterThan(150);
    for (const sort of [
      {},
      { sortBy: "id", sortOrder: "asc" },
      { sortBy: "id", sortOrder: "desc" },
    ] as const) {
      expect(await collectedMatches(queryString({ ...broad, ...sort }, 1, 25), accountId, null)).toBe(false);
      expect(await collectedMatches(queryString({ ...broad, ...sort }, 1, 25), accountId, 30)).toBe(false);
    }
    // More new leads on the page than the cap: the capped list is not the walk's.
    expect(await collectedMatches(queryString(broad, 1, 25), accountId, 3)).toBe(true);
    // Nulls last ascending has no index order; pages past 500; a state to include.
    expect(await collectedMatches(queryString({ ...broad, sortOrder: "asc" }, 1, 25), accountId, null)).toBe(
      true,
    );
    expect(await collectedMatches(queryString(broad, 6, 100), accountId, null)).toBe(true);
    expect(
      await collectedMatches(queryString({ ...broad, stateInclude: ["TX"] }, 1, 25), accountId, null),
    ).toBe(true);
  });

  it("GET /leads/preview answers the reference's pages and totals", async () => {
    for (const shape of SHAPES.slice(0, 6)) {
      const expected = reference(leads, shape);
      const res = await t
        .request()
        .get(`/api/v1/leads/preview?${queryString(shape, 2, 50)}`)
        .set(auth)
        .expect(200);
      const received = expected.filter((l) => l.id % 7 === 0).length;
      expect(res.body.data.pagination.total).toBe(expected.length);
      expect(res.body.data.summary.totalMatches).toBe(expected.length);
      expect(res.body.data.summary.newLeads).toBe(expected.length - received);
      expect(res.body.data.leads.map((l: { id: number }) => l.id)).toEqual(
        expected.slice(50, 100).map((l) => l.id),
      );
    }
  });

  it("GET /leads caps the reference's list at the balance", async () => {
    const shape: RefQuery = { positive: ["repair", "paint"], negative: ["pros"] };
    const buyer = await buildAccount(t.ctx.db, {
      plan: "enterprise",
      monthlyCredits: 0,
      permanentCredits: 30,
    });
    const expected = reference(leads, shape);
    expect(expected.length).toBeGreaterThan(60);
    const res = await t
      .request()
      .get(`/api/v1/leads?${queryString(shape, 1, 10)}`)
      .set(buyer.auth)
      .expect(200);
    // Nothing received yet: the list is the first 30 matches.
    expect(res.body.data.pagination.total).toBe(30);
    expect(res.headers["x-credits-capped"]).toBe("true");
    expect(res.body.data.leads.map((l: { id: number }) => l.id)).toEqual(
      expected.slice(0, 10).map((l) => l.id),
    );
  });

  it("keeps other filters and sorts on the query over leads", () => {
    for (const query of [
      "positiveKeywords=repair&cityInclude=Austin",
      "positiveKeywords=repair&minStars=4",
      "positiveKeywords=repair&sortBy=city",
      "positiveKeywords=repair&sortBy=wCity",
      "positiveKeywords=repair&orColumns=companyName",
      "nameIncludeTerms=repair",
      "positiveKeywords=repair&descriptionExcludeTerms=cheap",
      "positiveKeywords=repair&websiteSchemaFilter=LocalBusiness",
      "positiveKeywords=repair&search=acme",
      "positiveKeywords=repair&streetInclude=main",
      "positiveKeywords=repair&zipExclude=78701",
      "positiveKeywords=repair&stateEmptyFilter=exclude_empty",
      "positiveKeywords=repair&registrationDateFrom=2020-01-01",
      "positiveKeywords=repair&timeScrapedTo=rel:1d",
      "positiveKeywords=repair&buyingSignalTypeFilter=Newly%20Added",
      "positiveKeywords=repair&emailPrimaryEmptyFilter=exclude_empty&emailPrimaryInclude=gmail",
      "positiveKeywords=repair&emailSecondaryEmptyFilter=exclude_empty",
      "positiveKeywords=repair&phoneTotalInclude=512",
      "positiveKeywords=repair&legalNameExclude=inc",
      "positiveKeywords=repair&minNumLocations=2",
      "positiveKeywords=repair&maxRatingValue=4",
      "positiveKeywords=repair&openPositionsEmptyFilter=only_empty",
      "positiveKeywords=repair&emailSecurityValues=spf",
      "positiveKeywords=repair&addressSourceEmptyFilter=only_empty",
      "positiveKeywords=repair&redirectFilter=no",
    ]) {
      expect(searchTableServes(parseSearchFilters(query, "query")), query).toBe(false);
    }
    // Wildcard keywords over the four columns, with or without a state or Last Buying Signal
    // bounds, stay on lead_search.
    for (const query of [
      "positiveKeywords=repair&lastBuyingSignalFrom=rel:30d",
      "positiveKeywords=repair&stateInclude=TX&lastUpdatedTo=2026-01-01",
      'positiveKeywords=["*auto*repair*","*body*shop*"]&negativeKeywords=["*franchise*"]',
      "positiveKeywords=*dental*&stateInclude=TX",
      "positiveKeywords=car *wash&stateExclude=CA&sortBy=id",
      // The real clients' contact filter and name sort (lead_search's has_email, has_phone, company_name).
      'positiveKeywords=["*dental*","*dentist*"]&emailPrimaryEmptyFilter=exclude_empty&maxCredits=50',
      "positiveKeywords=*roof*&phonePrimaryEmptyFilter=only_empty&stateInclude=TX",
      "positiveKeywords=*roof*&sortBy=wCompanyName&sortOrder=asc",
      "positiveKeywords=*roof*&sortBy=companyName&sortOrder=desc&emailPrimaryEmptyFilter=only_empty",
      "positiveKeywords=*auto*repair*&orColumns=wOgrequestedUrl,wSimpleCrawledUrl,wCompanyName,aiCategoryEstimation",
    ]) {
      expect(searchTableServes(parseSearchFilters(query, "query")), query).toBe(true);
    }
  });

  it("contact empty filters and the company-name sort answer as the query over leads, walked or collected", async () => {
    // Some blank and missing e-mails and phones, and names with ties and nulls (the last test of
    // this group: the reference snapshot `leads` no longer holds after it).
    await sql`update leads set email = case when id % 5 = 0 then null when id % 5 = 1 then '  ' else email end,
      phone = case when id % 4 = 0 then '' else phone end,
      company_name = case when id % 9 = 0 then null when id % 9 = 1 then 'Same Name' else company_name end
      where id % 3 = 0`.execute(t.ctx.db);
    expect(await searchTableDrift()).toBe(0);
    const extras = [
      "emailPrimaryEmptyFilter=exclude_empty",
      "emailPrimaryEmptyFilter=only_empty",
      "phonePrimaryEmptyFilter=exclude_empty&emailPrimaryEmptyFilter=exclude_empty",
      "sortBy=wCompanyName&sortOrder=asc",
      "sortBy=companyName&sortOrder=desc&phonePrimaryEmptyFilter=only_empty",
      "sortBy=wCompanyName&sortOrder=asc&emailPrimaryEmptyFilter=exclude_empty",
    ];
    let walked = 0;
    let collected = 0;
    let nonEmpty = 0;
    for (const shape of SHAPES.slice(0, 5)) {
      for (const extra of extras) {
        for (const page of [1, 2, 7]) {
          for (const [cap, list] of [
            [null, {}],
            [20, {}],
            [null, { newFirst: true }],
            [15, { onlyNew: true }],
          ] as const) {
            // An extra with a sort replaces the shape's own.
            const base = extra.includes("sortBy")
              ? { ...shape, sortBy: undefined, sortOrder: undefined }
              : shape;
            const query = `${queryString(base, page, 10)}&${extra}`;
            expect(searchTableServes(parseSearchFilters(query, "query")), query).toBe(true);
            const served = await sqlPage(query, accountId, true, cap, list);
            expect(served, `${query} cap ${cap} ${JSON.stringify(list)}`).toEqual(
              await sqlPage(query, accountId, false, cap, list),
            );
            if (served.ids.length > 0) nonEmpty += 1;
            if (await collectedMatches(query, accountId, cap, list)) collected += 1;
            else walked += 1;
          }
        }
      }
    }
    expect(nonEmpty).toBeGreaterThan(100);
    expect(walked).toBeGreaterThan(20);
    expect(collected).toBeGreaterThan(20);
    // A broad first page sorted by name (ascending) is walked in the name index's order.
    const byName = `${queryString({ positive: ["repair", "paint"], negative: ["pros"] }, 1, 25)}&sortBy=wCompanyName&sortOrder=asc`;
    expect(await collectedMatches(byName, accountId, null)).toBe(false);
  }, 240_000);
});

describe("lead_search follows every change of the leads", () => {
  it("imports, re-imports, updates, the AI classification and deletes", async () => {
    const w = uniqueWord();
    const records = [...generateLeads(200, SEED + 1)];
    await importLeadRecords(t.ctx.db, records);
    expect(await searchTableDrift()).toBe(0);

    // A re-import that renames some leads and moves others to another state.
    await importLeadRecords(
      t.ctx.db,
      records.map((r, i) =>
        i % 3 === 0 ? { ...r, companyName: `${w} ${i}` } : i % 3 === 1 ? { ...r, state: "WY" } : r,
      ),
    );
    expect(await searchTableDrift()).toBe(0);
    const auth = (await buildAccount(t.ctx.db)).auth;
    const found = await t
      .request()
      .get("/api/v1/leads/preview")
      .query({ positiveKeywords: w, limit: 100 })
      .set(auth)
      .expect(200);
    expect(found.body.data.pagination.total).toBe(Math.ceil(200 / 3));

    // Plain updates: the categories (as the AI classification writes them), state, sort key.
    const lead = await buildLead(t.ctx.db, { company_name: "Plain name", state: "tx" });
    await sql`update leads set ai_category_estimation = array[${`${w} category`}] where id = ${lead}`.execute(
      t.ctx.db,
    );
    expect(await searchTableDrift()).toBe(0);
    // Each searched value on its own.
    await sql`update leads set state = 'nv' where id = ${lead}`.execute(t.ctx.db);
    expect(await searchTableDrift()).toBe(0);
    await sql`update leads set last_buying_signal = null where id = ${lead}`.execute(t.ctx.db);
    expect(await searchTableDrift()).toBe(0);
    await sql`update leads set registered_url = ${`https://${w}.example`} where id = ${lead}`.execute(
      t.ctx.db,
    );
    expect(await searchTableDrift()).toBe(0);
    const byCategory = await t
      .request()
      .get("/api/v1/leads/preview")
      .query({ positiveKeywords: `${w} category`, stateInclude: "NV" })
      .set(auth)
      .expect(200);
    expect(byCategory.body.data.leads.map((l: { id: number }) => l.id)).toEqual([lead]);

    // The contact values and the name the table holds for the real clients' filters and sort.
    await sql`update leads set email = '   ', phone = null, company_name = ${`${w} renamed`} where id = ${lead}`.execute(
      t.ctx.db,
    );
    expect(await searchTableDrift()).toBe(0);
    await sql`update leads set email = 'owner@example.com' where id = ${lead}`.execute(t.ctx.db);
    expect(await searchTableDrift()).toBe(0);

    // An update that changes nothing searched leaves the row alone; a delete removes it.
    await sql`update leads set description = 'changed' where id = ${lead}`.execute(t.ctx.db);
    await sql`delete from leads where id = ${lead}`.execute(t.ctx.db);
    expect(await searchTableDrift()).toBe(0);
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from lead_search where id = ${lead}`.execute(t.ctx.db);
    expect(rows[0]!.n).toBe(0);
  });

  it("two imports of the same leads at once leave it equal to the leads", async () => {
    const records = [...generateLeads(300, SEED + 2)];
    await importLeadRecords(t.ctx.db, records);
    const renamed = (tag: string) =>
      records.map((r, i) => ({ ...r, companyName: `${tag} ${i}`, state: i % 2 === 0 ? "VT" : "ME" }));
    await Promise.all([
      importLeadRecords(t.ctx.db, renamed(uniqueWord()), { batchSize: 50 }),
      importLeadRecords(t.ctx.db, renamed(uniqueWord()), { batchSize: 70 }),
    ]);
    expect(await searchTableDrift()).toBe(0);
  });
});

describe("lead_search in state order (orderSearchTableByState)", () => {
  it("rewrites the table grouped by state, with the same rows and the same answers, and room for changed rows", async () => {
    const { accountId } = await buildAccount(t.ctx.db, { plan: "enterprise" });
    const shapes = SHAPES.filter((shape) => shape.stateInclude?.length === 1 || !shape.stateInclude);
    const before = await Promise.all(
      shapes.map((shape) => sqlPage(queryString(shape, 1, 25), accountId, true)),
    );
    // Rows in arrival order first: the states of the table's pages alternate.
    expect(await stateRuns()).toBeGreaterThan(100);

    await t.ctx.db.transaction().execute((trx) => orderSearchTableByState(trx));

    const distinct = await sql<{
      n: number;
    }>`select count(distinct coalesce(state, ''))::int as n from lead_search`
      .execute(t.ctx.db)
      .then((r) => r.rows[0]!.n);
    expect(await stateRuns()).toBe(distinct);
    expect(await searchTableDrift()).toBe(0);
    const after = await Promise.all(
      shapes.map((shape) => sqlPage(queryString(shape, 1, 25), accountId, true)),
    );
    expect(after).toEqual(before);
    // The temporary index is gone, and the table keeps free room on its pages.
    const indexes = await sql<{
      name: string;
    }>`select indexname as name from pg_indexes where tablename = 'lead_search'`
      .execute(t.ctx.db)
      .then((r) => r.rows.map((row) => row.name));
    expect(indexes).not.toContain("lead_search_state_order_idx");
    const options = await sql<{
      o: string[];
    }>`select reloptions as o from pg_class where relname = 'lead_search'`
      .execute(t.ctx.db)
      .then((r) => r.rows[0]!.o);
    expect(options).toContain(`fillfactor=${SEARCH_TABLE_FILLFACTOR}`);

    // A new buying signal rewrites the lead's row on its own page: it stays among its state's.
    const { id, page } = await sql<{ id: number; page: string }>`
      select id, (ctid::text::point)[0]::text as page from lead_search where state = 'TX' order by id limit 1`
      .execute(t.ctx.db)
      .then((r) => r.rows[0]!);
    await sql`update leads set last_buying_signal = now() where id = ${id}`.execute(t.ctx.db);
    const moved = await sql<{
      page: string;
    }>`select (ctid::text::point)[0]::text as page from lead_search where id = ${id}`
      .execute(t.ctx.db)
      .then((r) => r.rows[0]!.page);
    expect(moved).toBe(page);
  });
});

/** How many runs of one state the table's rows form in physical order (one per state when ordered). */
async function stateRuns(): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from (
      select coalesce(state, '') as state, lag(coalesce(state, '')) over (order by ctid) as previous from lead_search
    ) s where previous is distinct from state`.execute(t.ctx.db);
  return rows[0]!.n;
}
