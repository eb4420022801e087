import { type Kysely, sql } from "kysely";

// Export formats (saved column layouts and split rules) and the export history (one row per
// exported file, kept downloadable for 90 days).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("export_formats")
    .addColumn("id", "serial", (c) => c.primaryKey())
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("file_type", "text", (c) => c.notNull())
    .addColumn("start_row", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("field_mappings", "jsonb", (c) => c.notNull())
    .addColumn("is_default", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("split_files", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("split_mode", "text")
    .addColumn("max_rows_per_file", "integer")
    .addColumn("number_of_parts", "integer")
    .addColumn("include_total", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("include_headers", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("database_type", "text", (c) => c.notNull().defaultTo("other"))
    .addColumn("combined_assignee_column_name", "text")
    .addColumn("combined_file_name_column_name", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint("export_formats_file_type_check", sql`file_type in ('csv', 'json', 'xlsx')`)
    .execute();
  await db.schema
    .createIndex("export_formats_account_idx")
    .on("export_formats")
    .columns(["account_id", "id"])
    .execute();
  // At most one default format per account.
  await db.schema
    .createIndex("export_formats_one_default_idx")
    .on("export_formats")
    .column("account_id")
    .unique()
    .where(sql.ref("is_default"), "=", true)
    .execute();

  await db.schema
    .createTable("export_history")
    .addColumn("id", "serial", (c) => c.primaryKey())
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("export_id", "text", (c) => c.notNull())
    .addColumn("file_name", "text", (c) => c.notNull())
    .addColumn("file_type", "text", (c) => c.notNull())
    .addColumn("lead_count", "integer", (c) => c.notNull())
    .addColumn("file_size", "integer", (c) => c.notNull())
    .addColumn("format_name", "text")
    .addColumn("database_type", "text", (c) => c.notNull().defaultTo("other"))
    .addColumn("export_method", "text", (c) => c.notNull())
    .addColumn("part_number", "integer")
    .addColumn("is_total", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("storage_key", "text", (c) => c.notNull())
    .addColumn("file_deleted_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("export_history_account_created_idx")
    .on("export_history")
    .columns(["account_id", "created_at desc", "id desc"])
    .execute();
  // The cleanup task finds expired files whose bytes are still stored.
  await db.schema
    .createIndex("export_history_expiring_idx")
    .on("export_history")
    .column("expires_at")
    .where(sql.ref("file_deleted_at"), "is", null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("export_history").ifExists().execute();
  await db.schema.dropTable("export_formats").ifExists().execute();
}
