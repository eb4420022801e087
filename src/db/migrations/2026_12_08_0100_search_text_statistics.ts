import { type Kysely, sql } from "kysely";

/**
 * Histogram entries PostgreSQL keeps for `lead_search.search_text` (its default is 100).
 * PostgreSQL estimates a `LIKE '%term%'` by the share of the histogram's entries that match; with
 * 100 entries a term in 1-2% of the leads often matches none and is estimated at the floor of
 * 0.01%: at 1M leads 8 of the bench's 29 trade words (`fitness`, 22,692 leads) at 100 rows, and the
 * account's history was then joined by a loop of index probes, one per match. With 1,000 entries
 * all of them are estimated within 0.6-2.1x. It costs about 2 ms more planning for a broad
 * search, 0.6 ms for a narrow one, and ANALYZE samples 300,000 rows instead of 30,000
 * (docs/performance.md, 2026-12-08).
 */
const SEARCH_TEXT_STATISTICS = 1000;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table lead_search alter column search_text set statistics ${sql.lit(SEARCH_TEXT_STATISTICS)}`.execute(
    db,
  );
  await sql`analyze lead_search`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table lead_search alter column search_text set statistics -1`.execute(db);
}
