import { type Kysely, sql } from "kysely";

// Settings shared by every process of the deployment (for example the generated signing secret).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("app_settings")
    .addColumn("key", "text", (c) => c.primaryKey())
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("app_settings").ifExists().execute();
}
