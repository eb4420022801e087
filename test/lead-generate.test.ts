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
      .select(["company_name", "state"])
      .where("external_id", "=", "gen-5-17")
      .executeTakeFirstOrThrow();
    const expected = generateLead(5, 17);
    expect(stored).toEqual({ company_name: expected.companyName, state: expected.state });
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
});
