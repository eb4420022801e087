import { type Kysely, sql } from "kysely";

// The lead database, the per-account lead export history (sticky rule), filter presets, keyword
// lists and the export blacklist. Search columns and indexes come in their own migration.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("leads")
    .addColumn("id", "serial", (c) => c.primaryKey())
    .addColumn("external_id", "text", (c) => c.unique())
    .addColumn("company_name", "text")
    .addColumn("legal_name", "text")
    .addColumn("registered_url", "text")
    .addColumn("crawled_url", "text")
    .addColumn("email", "text")
    .addColumn("email_secondary", "text")
    .addColumn("email_tier1", "text")
    .addColumn("email_tier2", "text")
    .addColumn("email_tier3", "text")
    .addColumn("email_tier4", "text")
    .addColumn("email_tier5", "text")
    .addColumn("email_tier6", "text")
    .addColumn("phone", "text")
    .addColumn("phone_secondary", "text")
    .addColumn("street", "text")
    .addColumn("city", "text")
    .addColumn("state", "text")
    .addColumn("zip", "text")
    .addColumn("country", "text")
    .addColumn("category", "text")
    .addColumn("description", "text")
    .addColumn("long_description", "text")
    .addColumn("ai_category_estimation", sql`text[]`)
    .addColumn("stars", "double precision")
    .addColumn("review_count", "integer")
    .addColumn("website_schema_types", sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn("last_buying_signal", "timestamptz")
    .addColumn("buying_signal_type", sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn("last_updated", "timestamptz")
    .addColumn("employees", "integer")
    .addColumn("founded_date", "date")
    .addColumn("number_of_locations", "integer")
    .addColumn("is_chain", "boolean")
    .addColumn("price_range", "text")
    .addColumn("naics_code", "text")
    .addColumn("founders", sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn("opening_hours", "text")
    .addColumn("social_profiles", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("web_technologies", sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable("lead_export_history")
    .addColumn("id", "serial", (c) => c.primaryKey())
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("lead_id", "integer", (c) => c.notNull().references("leads.id").onDelete("cascade"))
    .addColumn("database_type", "text", (c) => c.notNull().defaultTo("other"))
    .addColumn("exported_at", "timestamptz", (c) => c.notNull())
    .addColumn("export_method", "text", (c) => c.notNull())
    .addColumn("lead_last_updated", "timestamptz")
    .addColumn("lead_snapshot", "jsonb")
    .addColumn("last_changed_fields", sql`text[]`)
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("lead_export_history_account_lead_key", ["account_id", "lead_id"])
    .execute();
  await db.schema
    .createIndex("lead_export_history_account_exported_idx")
    .on("lead_export_history")
    .columns(["account_id", "exported_at desc", "id desc"])
    .execute();

  await db.schema
    .createTable("filter_presets")
    .addColumn("id", "serial", (c) => c.primaryKey())
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("filters", "jsonb", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("filter_presets_account_idx")
    .on("filter_presets")
    .column("account_id")
    .execute();

  await db.schema
    .createTable("keyword_lists")
    .addColumn("id", "serial", (c) => c.primaryKey())
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull().check(sql`type in ('positive', 'negative')`))
    .addColumn("keywords", sql`text[]`, (c) => c.notNull())
    .addColumn("source_categories", sql`text[]`)
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("keyword_lists_account_idx").on("keyword_lists").column("account_id").execute();

  await db.schema
    .createTable("export_blacklist")
    .addColumn("id", "serial", (c) => c.primaryKey())
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("entry_type", "text", (c) => c.notNull().check(sql`entry_type = 'domain'`))
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("export_blacklist_account_value_key", ["account_id", "entry_type", "value"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    "export_blacklist",
    "keyword_lists",
    "filter_presets",
    "lead_export_history",
    "leads",
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
