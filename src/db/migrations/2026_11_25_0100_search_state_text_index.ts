import { type Kysely, sql } from "kysely";

// One index for the keyword and state conditions of `lead_search` (docs/search.md "One index for
// keywords and states").
//
// A search with a state ANDed the bitmap of its keywords' trigram matches (about 96,000 rows for
// `insurance` at 5M leads) with the bitmap of the state's leads (179,000 rows for MO): two large
// bitmaps built to keep a few thousand rows. A GIN index over (state, search_text) answers
// `state = 'MO' and search_text like '%insurance%'` in one scan, intersecting inside the index,
// so only the matching rows enter the bitmap. The state column uses btree_gin's operator class;
// searches without a state use the same index for their trigram conditions alone, as before.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create extension if not exists btree_gin`.execute(db);
  await sql`select set_config('maintenance_work_mem', '256MB', true)`.execute(db);
  await sql`create index lead_search_state_text_idx on lead_search using gin (state, search_text gin_trgm_ops)`.execute(
    db,
  );
  await sql`drop index lead_search_text_trgm_idx`.execute(db);
  await sql`drop index lead_search_state_idx`.execute(db);
  await sql`analyze lead_search`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index lead_search_text_trgm_idx on lead_search using gin (search_text gin_trgm_ops)`.execute(
    db,
  );
  await sql`create index lead_search_state_idx on lead_search (state)`.execute(db);
  await sql`drop index lead_search_state_text_idx`.execute(db);
}
