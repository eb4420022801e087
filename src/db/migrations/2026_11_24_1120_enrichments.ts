import { type Kysely, sql } from "kysely";

// Enrichment runs (docs/enrichments.md).
// - `enrichment_runs`: one row per `POST /enrichments`, with its status, counters and credits in
//   tenths. `lease_token` / `heartbeat_at` fence the worker that processes it: a slice commits only
//   while it holds the lease, so a run taken over after a crash is never processed twice.
// - `enrichment_urls`: one row per row of the result file (`position` in submission order), with
//   its status (null while pending), the matched lead and the contacts found live.
// - `enrichment_settings`: the account setting that `emailResults` defaults to (false when absent).
// - `enrichment_url_host(url)`: the host of a URL as matching compares it (lower case, no scheme,
//   user, port, path, trailing dot or `www.`), with expression indexes on the leads' two URL columns
//   so matching looks hosts up in bulk through an index.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function enrichment_url_host(url text) returns text
    language sql immutable parallel safe returns null on null input as $$
      select nullif(
        regexp_replace(regexp_replace(regexp_replace(regexp_replace(
          split_part(split_part(split_part(
            regexp_replace(lower(btrim(url)), '^([a-z][a-z0-9+.-]*:)?//', ''),
          '/', 1), '?', 1), '#', 1),
        '^.*@', ''), ':[0-9]*$', ''), '\\.$', ''), '^www\\.', ''),
      '')
    $$`.execute(db);
  await sql`create index leads_registered_url_host_idx on leads (enrichment_url_host(registered_url))`.execute(
    db,
  );
  await sql`create index leads_crawled_url_host_idx on leads (enrichment_url_host(crawled_url))`.execute(db);

  await sql`
    create table enrichment_runs (
      id serial primary key,
      account_id integer not null references accounts (id) on delete cascade,
      status text not null default 'queued' check (status in
        ('queued', 'matching', 'scraping', 'merging', 'delivering', 'completed', 'partial', 'failed')),
      contact_types text not null check (contact_types in ('phone', 'email', 'either')),
      database_match_percent integer not null check (database_match_percent between 0 and 100),
      max_credits_tenths bigint,
      limit_tenths bigint not null,
      email_results boolean not null,
      submitted_count integer not null,
      duplicates_removed integer not null,
      skipped_invalid integer not null,
      url_count integer not null,
      processed integer not null default 0,
      match_cursor integer not null default -1,
      db_matched integer not null default 0,
      db_charged integer not null default 0,
      db_free integer not null default 0,
      db_skipped_budget integer not null default 0,
      db_no_contact integer not null default 0,
      live_sent integer not null default 0,
      live_delivered integer not null default 0,
      live_failed integer not null default 0,
      live_no_contact integer not null default 0,
      live_skipped_budget integer not null default 0,
      db_charged_tenths bigint not null default 0,
      live_charged_tenths bigint not null default 0,
      credits_final boolean not null default false,
      result_row_count integer not null default 0,
      result_entry_id integer references export_history (id) on delete set null,
      ended_early boolean not null default false,
      error text,
      lease_token uuid,
      heartbeat_at timestamptz,
      created_at timestamptz not null default now(),
      started_at timestamptz,
      completed_at timestamptz,
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index enrichment_runs_account_idx on enrichment_runs (account_id, id desc)`.execute(db);
  await sql`create index enrichment_runs_unfinished_idx on enrichment_runs (heartbeat_at)
    where status not in ('completed', 'partial', 'failed')`.execute(db);

  await sql`
    create table enrichment_urls (
      run_id integer not null references enrichment_runs (id) on delete cascade,
      position integer not null,
      submitted_url text not null,
      host text,
      status text check (status in ('matched_paid', 'scraped', 'matched_free', 'scrape_failed',
        'skipped_db_budget', 'skipped_scrape_budget', 'matched_no_contact', 'scraped_no_contact',
        'skipped_invalid')),
      lead_id integer,
      credits_tenths integer not null default 0,
      contacts jsonb,
      primary key (run_id, position)
    )`.execute(db);

  await sql`
    create table enrichment_settings (
      account_id integer primary key references accounts (id) on delete cascade,
      email_results boolean not null default false
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists enrichment_settings`.execute(db);
  await sql`drop table if exists enrichment_urls`.execute(db);
  await sql`drop table if exists enrichment_runs`.execute(db);
  await sql`drop index if exists leads_crawled_url_host_idx`.execute(db);
  await sql`drop index if exists leads_registered_url_host_idx`.execute(db);
  await sql`drop function if exists enrichment_url_host(text)`.execute(db);
}
