import { sql, type Kysely } from "kysely";

// CRM integrations (issue 16, docs/integrations.md "CRMs"): the OAuth links handed out by
// connect (single use, 10 minutes, bound to the account and the API key; PKCE verifier where
// the CRM supports it), each CRM integration's encrypted tokens and field mapping, and the CRM
// field lists cached for 10 minutes (in Postgres, so every process shows the same `cachedAt`).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table crm_oauth_states (
      state_hash text primary key,
      account_id integer not null references accounts(id) on delete cascade,
      api_key_id integer not null,
      provider text not null,
      environment text not null,
      code_verifier text,
      expires_at timestamptz not null,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index crm_oauth_states_expires_idx on crm_oauth_states (expires_at)`.execute(db);
  await sql`
    create table crm_connections (
      integration_id integer primary key references integrations(id) on delete cascade,
      access_token text not null,
      refresh_token text not null,
      api_base text not null,
      field_mapping jsonb not null default '{}'::jsonb,
      refreshed_at timestamptz not null default now()
    )`.execute(db);
  await sql`
    create table crm_field_lists (
      integration_id integer not null references integrations(id) on delete cascade,
      list text not null,
      fields jsonb not null,
      cached_at timestamptz not null default now(),
      primary key (integration_id, list)
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table crm_field_lists`.execute(db);
  await sql`drop table crm_connections`.execute(db);
  await sql`drop table crm_oauth_states`.execute(db);
}
