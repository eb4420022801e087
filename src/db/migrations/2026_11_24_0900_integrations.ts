import { type Kysely, sql } from "kysely";

// Integrations (webhook destinations; CRMs later), their subscriptions, the event outbox, the
// delivery log and the owner notices of API-key changes (docs/integrations.md, docs/events.md).
// - `integrations.revision` counts setting changes: a PATCH applies on top of the revision it
//   read and retries once when another change landed meanwhile (the conflict rule).
// - `integrations.api_key_destinations`: the destinations the header API key was set for; it is
//   sent to no other URL.
// - `event_outbox`: events written in the transaction of their cause, read by the worker
//   (events__dispatch), which turns each into deliveries and deletes it. Lead events carry the
//   delivered lead versions (`lead_refs`), not copies of the leads.
// - `integration_deliveries`: one row per (subscription, event), with the event id kept across
//   attempts; `parked` rows wait for their integration to be connected again.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table integrations (
      id serial primary key,
      account_id integer not null references accounts (id) on delete cascade,
      provider text not null,
      status text not null default 'connected',
      display_name text not null,
      target_url text,
      signing_secret text not null,
      api_key text,
      api_key_destinations text[] not null default '{}',
      external_account_id text,
      metadata jsonb not null default '{}',
      deal_settings jsonb,
      consecutive_failures integer not null default 0,
      last_failure_at timestamptz,
      last_success_at timestamptz,
      token_expires_at timestamptz,
      created_via jsonb,
      last_changed_via jsonb,
      last_changed_at timestamptz,
      revision integer not null default 1,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index integrations_account_idx on integrations (account_id, id desc)`.execute(db);
  await sql`
    create table integration_subscriptions (
      id serial primary key,
      integration_id integer not null references integrations (id) on delete cascade,
      account_id integer not null,
      event_type text not null,
      target_url text,
      is_active boolean not null default true,
      config jsonb not null default '{}',
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`
    create index integration_subscriptions_integration_idx
    on integration_subscriptions (integration_id, id)`.execute(db);
  await sql`
    create index integration_subscriptions_active_idx
    on integration_subscriptions (account_id, event_type) where is_active`.execute(db);
  await sql`
    create table event_outbox (
      id bigserial primary key,
      account_id integer not null references accounts (id) on delete cascade,
      event_type text not null,
      data jsonb,
      lead_refs jsonb,
      exclude_integration_id integer,
      occurred_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index event_outbox_account_idx on event_outbox (account_id, id)`.execute(db);
  await sql`
    create table integration_deliveries (
      id serial primary key,
      account_id integer not null,
      integration_id integer not null references integrations (id) on delete cascade,
      subscription_id integer references integration_subscriptions (id) on delete set null,
      event_id text not null,
      event_type text not null,
      occurred_at timestamptz not null,
      target_url text not null,
      data jsonb not null,
      automatic boolean not null,
      status text not null default 'pending',
      status_code integer,
      attempt_count integer not null default 0,
      latency_ms integer,
      error_message text,
      response_body text,
      next_attempt_at timestamptz,
      parked boolean not null default false,
      batch_summary jsonb,
      created_at timestamptz not null default now(),
      completed_at timestamptz
    )`.execute(db);
  await sql`
    create index integration_deliveries_integration_idx
    on integration_deliveries (integration_id, id desc)`.execute(db);
  await sql`
    create index integration_deliveries_parked_idx
    on integration_deliveries (integration_id) where parked`.execute(db);
  await sql`
    create table integration_change_notices (
      id bigserial primary key,
      account_id integer not null references accounts (id) on delete cascade,
      summary text not null,
      created_at timestamptz not null default now(),
      mailed_at timestamptz
    )`.execute(db);
  await sql`
    create index integration_change_notices_account_idx
    on integration_change_notices (account_id, created_at)`.execute(db);
  // Deliveries parked while their integration was paused go back to the queue the moment it is
  // connected again, whichever path connects it (a PATCH, a successful test).
  await sql`
    create function integrations_requeue_parked() returns trigger language plpgsql as $$
    begin
      perform graphile_worker.add_jobs(array(
        select row('integrations__deliver', json_build_object('deliveryId', d.id), null, null, 25,
                   null, null, null)::graphile_worker.job_spec
        from integration_deliveries d
        where d.integration_id = new.id and d.parked));
      update integration_deliveries set parked = false, next_attempt_at = null
      where integration_id = new.id and parked;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger integrations_requeue_parked after update of status on integrations
    for each row when (new.status = 'connected' and old.status <> 'connected')
    execute function integrations_requeue_parked()`.execute(db);
  await sql`alter table accounts add column low_balance_notified boolean not null default false`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table accounts drop column low_balance_notified`.execute(db);
  await sql`drop table integration_change_notices`.execute(db);
  await sql`drop table integration_deliveries`.execute(db);
  await sql`drop function integrations_requeue_parked cascade`.execute(db);
  await sql`drop table event_outbox`.execute(db);
  await sql`drop table integration_subscriptions`.execute(db);
  await sql`drop table integrations`.execute(db);
}
