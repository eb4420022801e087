import { sql, type Kysely } from "kysely";

// Live updates of imports, made crash-safe (issue 13, docs/leads.md "Live updates"): the statement
// that writes an import batch also queues the existing leads whose data it changed, one row per
// batch, so a committed change is never forgotten. The sender takes queued rows, writes the
// `lead.updated` outbox rows and deletes what it took in one transaction: exactly once.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table lead_live_updates (
      id bigserial primary key,
      lead_ids integer[] not null,
      versions integer[] not null,
      created_at timestamptz not null default now()
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table lead_live_updates`.execute(db);
}
