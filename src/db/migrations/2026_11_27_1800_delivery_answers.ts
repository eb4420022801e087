import { type Kysely, sql } from "kysely";

// Answers of deliveries noted as they arrive (docs/events.md "The delivery queue"): a claimer
// records its claim's attempts when the claim commits; meanwhile each 2xx answer is written here
// from another connection (the claim's rows are locked by its own transaction), so a claim whose
// worker dies is not sent again as a whole: the next claim records the noted successes without
// sending them. Keyed by delivery and the attempt count it was claimed at (a note of an older
// attempt never matches). UNLOGGED: no WAL and no disk flush per note; a PostgreSQL crash empties
// it, which only means those deliveries are sent again (at least once, as before). Deleted by the
// claim that records them; the minute's delivery sweep removes notes left for an hour.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create unlogged table integration_delivery_answers (
      delivery_id integer primary key,
      attempt_count integer not null,
      status_code integer,
      latency_ms integer not null,
      response_body text,
      noted_at timestamptz not null default now()
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table integration_delivery_answers`.execute(db);
}
