import { type Kysely, sql } from "kysely";

/**
 * The search parameters of the export that wrote each file (`filters` of `GET /export-history`),
 * in their canonical JSON form; null for files not written from a search (`selectedIds`, e-mail
 * schedules, files recorded before this column). A nullable column: no table rewrite.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table export_history add column if not exists filters jsonb`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table export_history drop column if exists filters`.execute(db);
}
