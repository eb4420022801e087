import { type Kysely, sql } from "kysely";

// Background jobs of long-running requests: their state, progress, stored answer, idempotency key
// and the request hash that joins identical requests. The work itself is queued in
// graphile-worker (task jobs__run); this table is what every API process reads and polls.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("jobs")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("kind", "text", (c) => c.notNull())
    // The operation (method + path template) the job was started from: keys are per endpoint.
    .addColumn("endpoint", "text", (c) => c.notNull())
    .addColumn("request_hash", "text", (c) => c.notNull())
    .addColumn("idempotency_key", "text")
    // Null while the job runs (the key holds), set when it finishes.
    .addColumn("key_expires_at", "timestamptz")
    .addColumn("input", "jsonb", (c) => c.notNull())
    .addColumn("status", "text", (c) =>
      c
        .notNull()
        .defaultTo("running")
        .check(sql`status in ('running', 'completed', 'failed', 'expired')`),
    )
    .addColumn("phase", "text", (c) => c.notNull().defaultTo("queued"))
    .addColumn("progress_done", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("progress_total", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("progress_label", "text", (c) => c.notNull().defaultTo(""))
    // {status, headers, body} or {status, headers, file: {storageKey, contentType, fileName, shared}}
    .addColumn("answer", "jsonb")
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("worker_id", "text")
    .addColumn("heartbeat_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("deadline_at", "timestamptz", (c) => c.notNull())
    .addColumn("started_at", "timestamptz")
    .addColumn("finished_at", "timestamptz")
    .addColumn("result_expires_at", "timestamptz")
    .addColumn("expired_at", "timestamptz")
    .execute();

  await sql`create unique index jobs_idempotency_key_idx on jobs (account_id, endpoint, idempotency_key)
    where idempotency_key is not null`.execute(db);
  await sql`create index jobs_running_idx on jobs (account_id, kind, endpoint, request_hash)
    where status = 'running'`.execute(db);
  await sql`create index jobs_finished_idx on jobs (account_id, finished_at)
    where status in ('completed', 'failed')`.execute(db);
  await sql`create index jobs_result_expiry_idx on jobs (result_expires_at)
    where status in ('completed', 'failed')`.execute(db);
  await sql`create index jobs_expired_idx on jobs (expired_at) where status = 'expired'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("jobs").ifExists().execute();
}
