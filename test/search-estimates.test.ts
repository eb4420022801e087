import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSearchFilters } from "../src/leads/search/filters.js";
import { searchTableCondition } from "../src/leads/search/query.js";
import { createTestDatabase, type TestDatabase } from "./helpers/db.js";

// The planner's estimate of a keyword condition decides how a search joins the account's history
// (a hash join, or a loop per match); docs/search.md, "Same results, by construction".

let database: TestDatabase;
const LEADS = 2_000;
const MATCHING = 600;

beforeAll(async () => {
  database = await createTestDatabase();
  // 600 of 2,000 leads are auto repair shops by name; every search_text differs (the numbers).
  await sql`insert into leads (external_id, company_name, state, country, last_updated, social_profiles, updated_at)
    select 'estimate-' || g,
      case when g <= ${MATCHING} then 'Auto Body Repair ' || g else 'Corner Bakery ' || g end,
      'TX', 'US', now(), '{}', now()
    from generate_series(1, ${LEADS}) g`.execute(database.db);
  await sql`analyze lead_search`.execute(database.db);
}, 60_000);
afterAll(() => database?.destroy());

/** The planner's row estimate and the actual count of `lead_search` rows a search's condition keeps. */
async function estimateAndCount(query: string): Promise<{ estimated: number; actual: number }> {
  const condition = searchTableCondition(parseSearchFilters(query, "query"));
  const { rows } = await sql<{
    "QUERY PLAN": unknown;
  }>`explain (format json) select s.id from lead_search s where ${condition}`.execute(database.db);
  const plan = (rows[0]?.["QUERY PLAN"] as [{ Plan: { "Plan Rows": number } }])[0].Plan;
  const counted = await sql<{
    n: number;
  }>`select count(*)::int as n from lead_search s where ${condition}`.execute(database.db);
  return { estimated: plan["Plan Rows"], actual: counted.rows[0]!.n };
}

describe("keyword conditions on lead_search", () => {
  it("estimate an inner wildcard's matches as what they are, not as two unrelated conditions", async () => {
    const { estimated, actual } = await estimateAndCount(
      `?positiveKeywords=${encodeURIComponent('["*auto*repair*"]')}`,
    );
    expect(actual).toBe(MATCHING);
    // The LIKE and the expression of the same parts side by side were estimated at 0.3 x 0.3 of
    // the rows: 184 here.
    expect(estimated).toBeGreaterThanOrEqual(actual / 2);
    expect(estimated).toBeLessThanOrEqual(actual * 2);
  });
});
