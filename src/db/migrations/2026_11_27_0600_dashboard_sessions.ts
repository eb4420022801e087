import { type Kysely, sql } from "kysely";

// The dashboard's sign-in and the API keys' last use (docs/dashboard.md).
// - `api_key_usage`: when each key last authenticated a request, written at most once a minute per
//   key and process. A table of its own, not a column of `api_keys`: the triggers of migration
//   0600 tell every key cache on any update of `api_keys`, and a use must not empty the caches.
// - `dashboard_sign_in_links`: one-time sign-in links, by the SHA-256 of their token (never the
//   token): 15 minutes, `used_at` set by the one request that consumes it.
// - `dashboard_sessions`: sessions by the SHA-256 of their cookie's token, with their expiry and
//   revocation (sign-out). No password is stored anywhere.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table api_key_usage (
      key_id integer primary key references api_keys (id) on delete cascade,
      last_used_at timestamptz not null
    )`.execute(db);
  await sql`
    create table dashboard_sign_in_links (
      id bigint generated always as identity primary key,
      account_id integer not null references accounts (id) on delete cascade,
      token_hash text not null unique,
      expires_at timestamptz not null,
      used_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index dashboard_sign_in_links_expiry on dashboard_sign_in_links (expires_at)`.execute(db);
  await sql`
    create table dashboard_sessions (
      id bigint generated always as identity primary key,
      account_id integer not null references accounts (id) on delete cascade,
      token_hash text not null unique,
      expires_at timestamptz not null,
      revoked_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index dashboard_sessions_account on dashboard_sessions (account_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists dashboard_sessions`.execute(db);
  await sql`drop table if exists dashboard_sign_in_links`.execute(db);
  await sql`drop table if exists api_key_usage`.execute(db);
}
