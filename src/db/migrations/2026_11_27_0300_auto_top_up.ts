import { type Kysely, sql } from "kysely";

// Auto top-up (docs/billing.md, "Auto top-up"): automatic credit purchases when the permanent
// balance falls below a trigger.
// - `auto_top_up_settings`: one row per account that configured it: the trigger, the purchase and
//   the cap per billing cycle as sent (`*_amount` in credits or dollars), the trigger in tenths of
//   a credit as the charging path compares it (`trigger_tenths`), the purchase claimed by a charge
//   and not made yet (`pending_id`, also the processor's idempotency key), the earliest next
//   attempt after a decline, a cap reached or a pending downgrade, and the declines in a row.
// - `auto_top_up_purchases`: every attempt with its billing cycle (`period_start`), so the cap
//   counts the cycle's purchases and GET shows the cycle's usage.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table auto_top_up_settings (
      account_id integer primary key references accounts (id) on delete cascade,
      enabled boolean not null default false,
      trigger_type text check (trigger_type in ('credits', 'dollars')),
      trigger_amount numeric(12, 2),
      trigger_tenths bigint,
      purchase_type text check (purchase_type in ('credits', 'dollars')),
      purchase_amount numeric(12, 2),
      cap_type text check (cap_type in ('credits', 'dollars')),
      cap_amount numeric(12, 2),
      pending_id uuid,
      pending_since timestamptz,
      next_attempt_at timestamptz,
      consecutive_failures integer not null default 0,
      disabled_reason text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`
    create table auto_top_up_purchases (
      id uuid primary key default gen_random_uuid(),
      account_id integer not null references accounts (id) on delete cascade,
      period_start timestamptz not null,
      pending_id uuid not null,
      credits integer not null,
      amount_cents integer not null,
      status text not null check (status in ('succeeded', 'declined')),
      payment_intent_id text,
      created_at timestamptz not null default now(),
      unique (pending_id)
    )`.execute(db);
  await sql`
    create index auto_top_up_purchases_cycle_idx on auto_top_up_purchases (account_id, period_start)
    where status = 'succeeded'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists auto_top_up_purchases`.execute(db);
  await sql`drop table if exists auto_top_up_settings`.execute(db);
}
