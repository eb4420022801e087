import { type Kysely, sql } from "kysely";

// Accounts, API keys, the credit ledger, rate-limit counters and e-mail schedules (their columns
// needed by the database switch; later migrations extend the table).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create extension if not exists pg_trgm`.execute(db);

  await db.schema
    .createTable("accounts")
    .addColumn("id", "serial", (c) => c.primaryKey())
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("first_name", "text")
    .addColumn("last_name", "text")
    .addColumn("company_name", "text")
    .addColumn("company_website", "text")
    .addColumn("smb_type", "text", (c) => c.notNull().defaultTo("other"))
    .addColumn("plan", "text")
    .addColumn("subscription_status", "text", (c) => c.notNull().defaultTo("none"))
    .addColumn("trial_used", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("free_leads_used", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("onboarding_completed", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("target_categories", sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn("target_locations", sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn("period_start", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("period_end", "timestamptz")
    .addColumn("database_switched_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index accounts_email_key on accounts (lower(email))`.execute(db);

  await db.schema
    .createTable("api_keys")
    .addColumn("id", "serial", (c) => c.primaryKey())
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("key_prefix", "text", (c) => c.notNull())
    .addColumn("key_hash", "text", (c) => c.notNull().unique())
    .addColumn("revoked_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("api_keys_account_idx").on("api_keys").column("account_id").execute();

  // Amounts are in tenths of a credit (a live-fetched enrichment URL costs 0.1 credit).
  await db.schema
    .createTable("credit_ledger")
    .addColumn("id", "bigserial", (c) => c.primaryKey())
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("bucket", "text", (c) => c.notNull().check(sql`bucket in ('monthly', 'permanent')`))
    .addColumn("kind", "text", (c) => c.notNull().check(sql`kind in ('grant', 'charge', 'expire')`))
    .addColumn("amount_tenths", "bigint", (c) => c.notNull())
    .addColumn("reason", "text", (c) => c.notNull())
    .addColumn("reference", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("credit_ledger_account_idx")
    .on("credit_ledger")
    .columns(["account_id", "bucket", "created_at"])
    .execute();

  // Shared counters of rate-limiter-flexible (RateLimiterPostgres), so every API process sees them.
  await db.schema
    .createTable("rate_limits")
    .addColumn("key", "varchar(255)", (c) => c.primaryKey())
    .addColumn("points", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("expire", "bigint")
    .execute();

  await db.schema
    .createTable("email_schedules")
    .addColumn("id", "serial", (c) => c.primaryKey())
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("database_type", "text", (c) => c.notNull().defaultTo("other"))
    .addColumn("is_active", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("pause_reason", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("email_schedules_account_idx")
    .on("email_schedules")
    .column("account_id")
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["email_schedules", "rate_limits", "credit_ledger", "api_keys", "accounts"]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
