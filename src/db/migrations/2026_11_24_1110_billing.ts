import { type Kysely, sql } from "kysely";

// Billing through the payment processor (docs/billing.md, docs/purchase.md).
// - `billing_customers`: one row per account that bought through the processor: its customer,
//   subscription and saved payment method, a downgrade waiting for the renewal, the overage
//   budget and its failed collections.
// - `billing_checkouts`: each `POST /purchase`: the hosted checkout session, or for an address
//   that already has an account, the hash of the e-mailed confirmation token.
// - `billing_events`: every processor event id seen, so each is applied exactly once; events about
//   a subscription not known yet wait here (`deferred`) until its checkout completes.
// - `billing_trials`: one trial per person, by normalised e-mail address.
// - `billing_payments`: off-session charges (credit purchases, overage, plan changes) with the
//   client's Idempotency-Key and the first answer.
// - `billing_grants`: the payment intents whose credits were granted (granted once, by the request
//   or by the processor's event, whichever commits first).
// - `billing_overage`: the overage (ledger bucket `overage`) collected or written off per account.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table billing_customers (
      account_id integer primary key references accounts (id) on delete cascade,
      customer_id text not null unique,
      subscription_id text unique,
      payment_method_id text,
      cancel_at_period_end boolean not null default false,
      pending_plan text,
      overage_budget_type text,
      overage_budget_amount integer,
      overage_failures integer not null default 0,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`
    create table billing_checkouts (
      id uuid primary key default gen_random_uuid(),
      email text not null,
      plan text not null,
      trial boolean not null,
      account_id integer references accounts (id) on delete cascade,
      session_id text unique,
      checkout_url text,
      confirm_token_hash text unique,
      status text not null default 'open',
      expires_at timestamptz not null,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`
    create table billing_events (
      event_id text primary key,
      event_type text not null,
      subscription_id text,
      status text not null,
      payload jsonb,
      event_created_at timestamptz not null,
      received_at timestamptz not null default now()
    )`.execute(db);
  await sql`
    create index billing_events_deferred_idx on billing_events (subscription_id, event_created_at)
    where status = 'deferred'`.execute(db);
  await sql`
    create table billing_trials (
      email_key text primary key,
      account_id integer references accounts (id) on delete set null,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`
    create table billing_payments (
      id uuid primary key default gen_random_uuid(),
      account_id integer not null references accounts (id) on delete cascade,
      kind text not null,
      idempotency_key text,
      request_hash text not null,
      payment_intent_id text,
      amount_cents integer not null,
      credits integer not null default 0,
      status text not null,
      answer jsonb,
      created_at timestamptz not null default now(),
      unique (account_id, kind, idempotency_key)
    )`.execute(db);
  await sql`
    create table billing_grants (
      payment_intent_id text primary key,
      account_id integer not null references accounts (id) on delete cascade,
      credits integer not null,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`
    create table billing_overage (
      account_id integer primary key references accounts (id) on delete cascade,
      collected_tenths bigint not null default 0,
      written_off_tenths bigint not null default 0,
      updated_at timestamptz not null default now()
    )`.execute(db);
  // Overage is a third ledger bucket: the budget of the period is granted into it, lead usage past
  // the credits is charged from it, and what is left expires at renewal (src/credits/ledger.ts).
  await sql`alter table credit_ledger drop constraint if exists credit_ledger_bucket_check`.execute(db);
  await sql`
    alter table credit_ledger add constraint credit_ledger_bucket_check
    check (bucket in ('monthly', 'permanent', 'overage'))`.execute(db);
  // The daily collection and GET /overage-budget read only the overage rows.
  await sql`
    create index credit_ledger_overage_idx on credit_ledger (account_id, created_at)
    where bucket = 'overage'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists credit_ledger_overage_idx`.execute(db);
  await sql`delete from credit_ledger where bucket = 'overage'`.execute(db);
  await sql`alter table credit_ledger drop constraint if exists credit_ledger_bucket_check`.execute(db);
  await sql`
    alter table credit_ledger add constraint credit_ledger_bucket_check
    check (bucket in ('monthly', 'permanent'))`.execute(db);
  for (const table of [
    "billing_overage",
    "billing_grants",
    "billing_payments",
    "billing_trials",
    "billing_events",
    "billing_checkouts",
    "billing_customers",
  ]) {
    await sql`drop table if exists ${sql.table(table)}`.execute(db);
  }
}
