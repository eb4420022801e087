import { readFileSync } from "node:fs";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateLead, generateLeads } from "../src/leads/import/generate.js";
import { validateLeadRecord } from "../src/leads/import/record.js";
import { US_STATE_CODES } from "../src/leads/import/values.js";
import { STATES } from "../src/leads/import/generate-data.js";
import { createTestDatabase, type TestDatabase } from "./helpers/db.js";
import { runAdminCli, tempFolder } from "./helpers/leads-import-factories.js";

describe("generateLeads", () => {
  it("gives the same leads for the same seed and other leads for another seed", () => {
    const a = [...generateLeads(200, 42)];
    const b = [...generateLeads(200, 42)];
    const c = [...generateLeads(200, 43)];
    expect(b).toEqual(a);
    expect(c.map((l) => l.companyName)).not.toEqual(a.map((l) => l.companyName));
    expect(a[0]?.id).toBe("gen-42-1");
    expect(a[199]?.id).toBe("gen-42-200");
    // Lead n does not depend on how many are generated.
    expect(generateLead(42, 150)).toEqual(a[149]);
  });

  const leads = [...generateLeads(3000, 7)];

  it("makes valid import records", () => {
    for (const lead of leads) expect(validateLeadRecord(lead, "json")).toMatchObject({ ok: true });
  });

  it("spreads leads over real states, their cities and ZIP prefixes, and many trades", () => {
    const cityZip = new Map<string, string>();
    for (const s of STATES) for (const c of s.cities) cityZip.set(`${s.code}/${c.name}`, c.zip);
    for (const lead of leads) {
      expect(US_STATE_CODES.has(lead.state as string)).toBe(true);
      if (lead.city && lead.zip) expect(lead.zip.slice(0, 3)).toBe(cityZip.get(`${lead.state}/${lead.city}`));
      if (lead.phone) expect(lead.phone).toMatch(/^\(\d{3}\) 555-\d{4}$/);
      if (lead.stars !== null) expect(lead.stars).toBeGreaterThanOrEqual(0);
      expect(lead.stars ?? 0).toBeLessThanOrEqual(5);
      expect(lead.aiCategoryEstimation === null || lead.aiCategoryEstimation!.length <= 3).toBe(true);
    }
    expect(new Set(leads.map((l) => l.state)).size).toBeGreaterThanOrEqual(20);
    expect(new Set(leads.map((l) => l.category).filter(Boolean)).size).toBeGreaterThanOrEqual(40);
    expect(new Set(leads.flatMap((l) => l.websiteSchemaTypes ?? [])).size).toBeGreaterThanOrEqual(20);
    expect(new Set(leads.flatMap((l) => l.buyingSignalType ?? [])).size).toBeGreaterThanOrEqual(8);
  });

  it("leaves some contacts and facts missing, at plausible rates", () => {
    const share = (test: (l: (typeof leads)[number]) => boolean) => leads.filter(test).length / leads.length;
    expect(share((l) => l.email === null)).toBeGreaterThan(0.08);
    expect(share((l) => l.email === null)).toBeLessThan(0.25);
    expect(share((l) => l.phone === null)).toBeGreaterThan(0.05);
    expect(share((l) => l.phone === null)).toBeLessThan(0.15);
    expect(share((l) => l.registeredUrl === null)).toBeGreaterThan(0.05);
    expect(share((l) => l.aiCategoryEstimation === null)).toBeGreaterThan(0.1);
    expect(share((l) => l.employees !== null)).toBeGreaterThan(0.3);
    // Some crawled URLs differ from the registered site, some are social or listing pages.
    expect(
      share((l) => !!l.crawledUrl && !!l.registeredUrl && !l.crawledUrl.includes(hostOf(l.registeredUrl))),
    ).toBeGreaterThan(0.03);
    expect(
      share((l) => /facebook|instagram|yelp|linktr|business\.site|sites\.google/.test(l.crawledUrl ?? "")),
    ).toBeGreaterThan(0.03);
  });

  it("puts e-mail addresses at the business's domain when it has one", () => {
    for (const lead of leads) {
      if (lead.registeredUrl && lead.email)
        expect(lead.email.endsWith(`@${hostOf(lead.registeredUrl)}`)).toBe(true);
    }
  });

  it("gives the site facts at plausible rates and values", () => {
    const share = (test: (l: (typeof leads)[number]) => boolean) => leads.filter(test).length / leads.length;
    const between = (test: (l: (typeof leads)[number]) => boolean, low: number, high: number) => {
      const found = share(test);
      expect(found).toBeGreaterThan(low);
      expect(found).toBeLessThan(high);
    };
    between((l) => l.duns !== null, 0.04, 0.12);
    between((l) => l.redirect === true, 0.06, 0.15);
    between((l) => l.redirect === null, 0.05, 0.2); // no site
    between((l) => l.openPositions !== null, 0.08, 0.2);
    between((l) => l.platform !== null, 0.6, 0.85);
    between((l) => l.websiteEmailProvider === "google.com", 0.25, 0.45);
    between((l) => (l.founderEmails ?? []).length > 0, 0.03, 0.12);
    between((l) => l.latitude !== null, 0.85, 0.99);
    for (const lead of leads) {
      expect(lead.latitude === null).toBe(lead.longitude === null);
      if (lead.redirect === null) expect(lead.registeredUrl).toBeNull();
      if (lead.timeScraped) {
        const at = Date.parse(lead.timeScraped);
        expect(at).toBeLessThanOrEqual(Date.UTC(2026, 10, 1));
        expect(at).toBeGreaterThan(Date.UTC(2026, 10, 1) - 60 * 86_400_000);
      }
      if (lead.registrationDate) expect(lead.registrationDate <= "2026-11-01").toBe(true);
      for (const item of lead.websiteEmailSecurity ?? []) {
        expect(["spf", "dkim", "dmarc", "bimi", "none"]).toContain(item);
      }
      if (lead.duns) expect(lead.duns).toMatch(/^\d{9}$/);
      if (lead.ratingValue !== null) expect(lead.ratingValue).toBeLessThanOrEqual(5);
      if (lead.founderEmails?.length) expect(lead.founders?.length).toBeGreaterThan(0);
    }
    const providers = new Set(leads.map((l) => l.emailPrimaryProvider));
    for (const p of ["google.com", "outlook.com", "secureserver.net", "yahoodns.net", null]) {
      expect(providers.has(p)).toBe(true);
    }
    expect(new Set(leads.map((l) => l.bookingOpsCrmSoftware)).size).toBeGreaterThan(20);
  });

  it("puts each lead's coordinates inside its state, near its city", () => {
    const states = new Map(STATES.map((s) => [s.code, s]));
    for (const lead of leads) {
      if (lead.latitude == null || lead.longitude == null) continue;
      const state = states.get(lead.state as string)!;
      expect(lead.latitude).toBeGreaterThanOrEqual(state.bounds.south);
      expect(lead.latitude).toBeLessThanOrEqual(state.bounds.north);
      expect(lead.longitude).toBeGreaterThanOrEqual(state.bounds.west);
      expect(lead.longitude).toBeLessThanOrEqual(state.bounds.east);
      if (lead.city) {
        const city = state.cities.find((c) => c.name === lead.city)!;
        expect(Math.abs(lead.latitude - city.latitude)).toBeLessThanOrEqual(0.04);
        expect(Math.abs(lead.longitude - city.longitude)).toBeLessThanOrEqual(0.04);
      }
    }
    // Every city centre of the word lists lies inside its state's box.
    for (const state of STATES) {
      for (const city of state.cities) {
        expect(city.latitude, city.name).toBeGreaterThan(state.bounds.south + 0.04);
        expect(city.latitude, city.name).toBeLessThan(state.bounds.north - 0.04);
        expect(city.longitude, city.name).toBeGreaterThan(state.bounds.west + 0.04);
        expect(city.longitude, city.name).toBeLessThan(state.bounds.east - 0.04);
      }
    }
  });

  it("dates buying signals within the 18 months before the reference date", () => {
    const reference = Date.UTC(2026, 10, 1);
    for (const lead of leads) {
      const at = Date.parse(lead.lastBuyingSignal as string);
      expect(at).toBeLessThanOrEqual(reference);
      expect(at).toBeGreaterThan(reference - 549 * 86_400_000);
      expect(Date.parse(lead.lastUpdated as string)).toBeGreaterThanOrEqual(at);
    }
  });
});

function hostOf(url: string): string {
  return new URL(url).host.replace(/^www\./, "");
}

describe("npm run admin -- generate-leads", () => {
  let database: TestDatabase;
  const files = tempFolder();
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.destroy();
    files.remove();
  });

  it("inserts generated leads through the importer; running it again updates them", async () => {
    const first = await runAdminCli(database.url, ["generate-leads", "--count", "300", "--seed", "5"]);
    expect(first.code).toBe(0);
    expect(first.lines).toHaveLength(1);
    expect(first.json).toEqual({ generated: 300, imported: 300, updated: 0, seed: 5 });
    const again = await runAdminCli(database.url, ["generate-leads", "--count", "310", "--seed", "5"]);
    expect(again.json).toEqual({ generated: 310, imported: 10, updated: 300, seed: 5 });
    const count = await sql<{ n: number }>`select count(*)::int as n from leads`.execute(database.db);
    expect(count.rows[0]?.n).toBe(310);
    const stored = await database.db
      .selectFrom("leads")
      .select(["company_name", "state", "latitude", "email_security", "platform"])
      .where("external_id", "=", "gen-5-17")
      .executeTakeFirstOrThrow();
    const expected = generateLead(5, 17);
    expect(stored).toEqual({
      company_name: expected.companyName,
      state: expected.state,
      latitude: expected.latitude,
      email_security: expected.websiteEmailSecurity,
      platform: expected.platform,
    });
  });

  it("writes an NDJSON file with --out that import-leads reads", async () => {
    const file = files.path("generated.ndjson");
    const run = await runAdminCli(database.url, [
      "generate-leads",
      "--count",
      "25",
      "--seed",
      "9",
      "--out",
      file,
    ]);
    expect(run.lines).toHaveLength(1);
    expect(run.json).toEqual({ generated: 25, file });
    const lines = readFileSync(file, "utf8").trim().split("\n");
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([...generateLeads(25, 9)]);
    const imported = await runAdminCli(database.url, ["import-leads", file]);
    expect(imported.json).toEqual({ imported: 25, updated: 0, rejected: 0, errors: [] });
  });

  it("refuses a count out of bounds or a missing --count with an error line", async () => {
    for (const args of [["--count", "0"], ["--count", "5000001"], ["--count", "abc"], []]) {
      const run = await runAdminCli(database.url, ["generate-leads", ...args]);
      expect(run.code).toBe(1);
      expect(run.lines).toHaveLength(1);
      expect(run.json.error).toMatch(/--count/);
    }
  });

  it("order-search-table rewrites the search table in state order; it takes no arguments", async () => {
    const run = await runAdminCli(database.url, ["order-search-table"]);
    expect(run.code).toBe(0);
    const leads = await sql<{ n: number }>`select count(*)::int as n from leads`.execute(database.db);
    expect(run.json).toEqual({ ordered: leads.rows[0]?.n, seconds: expect.any(Number) });
    // Physical order groups the states (docs/search.md, "`lead_search` in state order").
    const { rows } = await sql<{ state: string | null }>`select state from lead_search order by ctid`.execute(
      database.db,
    );
    const runs = rows.filter((row, i) => i === 0 || rows[i - 1]!.state !== row.state).length;
    expect(runs).toBe(new Set(rows.map((row) => row.state)).size);

    for (const args of [["now"], ["--force"]]) {
      const refused = await runAdminCli(database.url, ["order-search-table", ...args]);
      expect(refused.code).toBe(1);
      expect(refused.json.error).toMatch(/order-search-table|--force/);
    }
  });
});
