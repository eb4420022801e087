import { type Kysely, sql } from "kysely";

// AI helpers (docs/ai.md).
// - `ai_categories`: the catalogue of category names present in the lead database (`category` and
//   `ai_category_estimation`), with lead counts, a full-text vector and a trigram index, rebuilt
//   from the leads when older than a few minutes; `ai_category_catalog` holds when it was built.
//   The built-in back end ranks these names against a text; the model back end chooses among them.
// - `ai_keyword_generations`: background keyword generations of an account; at most one pending or
//   running per account (a partial unique index), with a copy of the lists each one produced.
// - `ai_classification_state` / `ai_unclassified_leads`: the background classification of leads
//   without `ai_category_estimation` walks them by id (the cursor) and remembers the leads it could
//   not classify, so they are retried only after a while. A partial index finds unclassified leads.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create extension if not exists pg_trgm`.execute(db);

  await sql`
    create table ai_categories (
      name text primary key,
      lead_count integer not null,
      search tsvector not null generated always as (to_tsvector('english', name)) stored
    )`.execute(db);
  await sql`create index ai_categories_search_idx on ai_categories using gin (search)`.execute(db);
  await sql`create index ai_categories_name_trgm_idx on ai_categories using gin (lower(name) gin_trgm_ops)`.execute(
    db,
  );
  await sql`
    create table ai_category_catalog (
      id boolean primary key default true check (id),
      built_at timestamptz not null
    )`.execute(db);

  await sql`
    create table ai_keyword_generations (
      id uuid primary key,
      account_id integer not null references accounts (id) on delete cascade,
      status text not null check (status in ('pending', 'running', 'completed', 'failed')),
      source_categories text[] not null,
      keyword_lists jsonb not null default '[]'::jsonb,
      error text,
      created_at timestamptz not null default now(),
      started_at timestamptz,
      completed_at timestamptz
    )`.execute(db);
  await sql`
    create index ai_keyword_generations_account_idx
    on ai_keyword_generations (account_id, created_at desc)`.execute(db);
  await sql`
    create unique index ai_keyword_generations_one_active_idx
    on ai_keyword_generations (account_id) where status in ('pending', 'running')`.execute(db);

  await sql`
    create table ai_classification_state (
      id boolean primary key default true check (id),
      last_lead_id integer not null default 0
    )`.execute(db);
  await sql`insert into ai_classification_state (id, last_lead_id) values (true, 0)`.execute(db);
  await sql`
    create table ai_unclassified_leads (
      lead_id integer primary key,
      attempted_at timestamptz not null
    )`.execute(db);
  await sql`create index leads_unclassified_idx on leads (id) where ai_category_estimation is null`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists leads_unclassified_idx`.execute(db);
  for (const table of [
    "ai_unclassified_leads",
    "ai_classification_state",
    "ai_keyword_generations",
    "ai_category_catalog",
    "ai_categories",
  ]) {
    await sql`drop table if exists ${sql.table(table)}`.execute(db);
  }
}
