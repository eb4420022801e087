import { type Kysely, sql } from "kysely";

// Fast substring search over the lead database, and the per-account lead query slots.
//
// `search_text` holds the four searched columns (registered URL, crawled URL, company name, AI
// categories), lower-cased and joined with U+0001, in one stored generated column with one
// trigram GIN index: a term without the separator matches one of the four columns exactly when
// `search_text LIKE '%term%'`, so the default search needs one indexed LIKE per term. Narrower
// OR groups and the space wildcard use it as an indexed prefilter and recheck per column.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create extension if not exists pg_trgm`.execute(db);

  // Immutable (array_to_string and concat_ws are only stable), so it can feed a generated column.
  await sql`
    create or replace function lead_search_text(registered_url text, crawled_url text, company_name text, categories text[])
    returns text
    language sql
    immutable
    parallel safe
    as $$
      select lower(
        coalesce(registered_url, '') || chr(1) || coalesce(crawled_url, '') || chr(1) ||
        coalesce(company_name, '') || chr(1) || coalesce(array_to_string(categories, chr(1)), '')
      )
    $$`.execute(db);

  await sql`
    alter table leads add column search_text text not null
    generated always as (lead_search_text(registered_url, crawled_url, company_name, ai_category_estimation)) stored`.execute(
    db,
  );
  await sql`create index leads_search_text_trgm_idx on leads using gin (search_text gin_trgm_ops)`.execute(
    db,
  );
  // Most searches name a state: its bitmap, ANDed with the trigram bitmap, cuts the rows read from
  // the table from every keyword match (tens of thousands) to those in the state.
  await sql`create index leads_state_upper_idx on leads (upper(state))`.execute(db);

  // The 10 lead query slots of each account (rows created on its first query): a slot with a
  // token and an expiry in the future is held by a running search or preview of some process.
  // Ephemeral (a crash forgets them, which is right), so the table is unlogged; `expires_at`
  // frees the slot of a process that died while holding it.
  await sql`
    create unlogged table lead_query_slots (
      account_id integer not null,
      slot integer not null,
      token uuid unique,
      expires_at timestamptz,
      primary key (account_id, slot)
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists lead_query_slots`.execute(db);
  await sql`drop index if exists leads_state_upper_idx`.execute(db);
  await sql`drop index if exists leads_search_text_trgm_idx`.execute(db);
  await sql`alter table leads drop column if exists search_text`.execute(db);
  await sql`drop function if exists lead_search_text(text, text, text, text[])`.execute(db);
}
