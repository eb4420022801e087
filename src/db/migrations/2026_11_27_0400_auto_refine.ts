import { type Kysely, sql } from "kysely";

// Keyword auto-refine (docs/ai.md, auto-refine).
// - `keyword_lists`: the refinement state of each list (`auto_refine_enabled`, `refinement_status`
//   null / running / paused / completed / failed, `scores_per_round` jsonb array of
//   {round, score, reasoning}, `current_round`, `max_rounds`, `last_refined_at`) and its pair
//   (`paired_list_id`, the positive list's negative partner and back; a deleted pair leaves null).
//   Nullable or defaulted columns: no table rewrite.
// - `ai_refinements`: one row per refinement run (a list and its pair). At most 3 are `running` in
//   the whole deployment: a start counts them under an advisory lock and is not queued when 3 run.
//   `heartbeat_at` is moved by the job between passes; a running row whose heartbeat is older than
//   15 minutes is taken for dead (its worker is gone) and no longer counts.
// - `leads_category_lower_idx`: the lead's own category name compared ignoring case, so the
//   built-in engine finds the leads of a source category through an index.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table keyword_lists
      add column if not exists auto_refine_enabled boolean not null default false,
      add column if not exists refinement_status text
        check (refinement_status in ('running', 'paused', 'completed', 'failed')),
      add column if not exists scores_per_round jsonb not null default '[]'::jsonb,
      add column if not exists paired_list_id integer references keyword_lists (id) on delete set null,
      add column if not exists current_round integer not null default 0,
      add column if not exists max_rounds integer not null default 2,
      add column if not exists last_refined_at timestamptz`.execute(db);

  await sql`
    create table ai_refinements (
      id uuid primary key,
      account_id integer not null references accounts (id) on delete cascade,
      list_id integer not null references keyword_lists (id) on delete cascade,
      paired_list_id integer references keyword_lists (id) on delete set null,
      status text not null check (status in ('running', 'paused', 'completed', 'failed')),
      error text,
      created_at timestamptz not null default now(),
      heartbeat_at timestamptz not null default now(),
      finished_at timestamptz
    )`.execute(db);
  await sql`create index ai_refinements_running_idx on ai_refinements (heartbeat_at) where status = 'running'`.execute(
    db,
  );
  await sql`create index ai_refinements_list_idx on ai_refinements (list_id)`.execute(db);
  await sql`create index leads_category_lower_idx on leads (lower(btrim(category)))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists leads_category_lower_idx`.execute(db);
  await sql`drop table if exists ai_refinements`.execute(db);
  await sql`
    alter table keyword_lists
      drop column if exists auto_refine_enabled,
      drop column if exists refinement_status,
      drop column if exists scores_per_round,
      drop column if exists paired_list_id,
      drop column if exists current_round,
      drop column if exists max_rounds,
      drop column if exists last_refined_at`.execute(db);
}
