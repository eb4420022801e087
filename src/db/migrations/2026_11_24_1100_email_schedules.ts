import { type Kysely, sql } from "kysely";

// E-mail schedules (src/email-schedules/). The table itself exists since 0001 (the database
// switch pauses schedules); this adds what a schedule is made of and what its runs keep:
// - `next_run_at`: when the next regular run is due (null while paused);
// - `run_claimed_at`: set while a worker runs the schedule's regular run (a lease: a crashed
//   worker's claim is taken over once it is old); a trigger answers 409 meanwhile;
// - `watermark_lead_id`: the highest lead id a run has considered (lead ids only grow, so the
//   leads new to the schedule are those above it); null before the first run;
// - `email_schedule_reservoir`: leads a run selected but did not send (over `maxLeadsPerEmail`,
//   or not paid for), sent first by the next run.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("email_schedules")
    .addColumn("filter_preset_id", "integer")
    .addColumn("export_format_id", "integer", (c) => c.references("export_formats.id").onDelete("set null"))
    .addColumn("interval_value", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("interval_unit", "text", (c) => c.notNull().defaultTo("days"))
    .addColumn("recipients", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("distribution_mode", "text", (c) => c.notNull().defaultTo("full_copy"))
    .addColumn("full_copy_recipients", sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
    .addColumn("max_leads_per_email", "integer")
    .addColumn("combined_file_enabled", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("combined_recipients", sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
    .addColumn("combined_columns_position", "text", (c) => c.notNull().defaultTo("end"))
    .addColumn("last_sent_at", "timestamptz")
    .addColumn("total_sent_count", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("next_run_at", "timestamptz")
    .addColumn("watermark_lead_id", "integer")
    .addColumn("run_claimed_at", "timestamptz")
    .execute();
  await db.schema
    .createIndex("email_schedules_due_idx")
    .on("email_schedules")
    .column("next_run_at")
    .where(sql.ref("is_active"), "=", true)
    .execute();

  await db.schema
    .createTable("email_schedule_reservoir")
    .addColumn("schedule_id", "integer", (c) =>
      c.notNull().references("email_schedules.id").onDelete("cascade"),
    )
    .addColumn("lead_id", "integer", (c) => c.notNull().references("leads.id").onDelete("cascade"))
    .addColumn("position", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("email_schedule_reservoir_pkey", ["schedule_id", "lead_id"])
    .execute();
  await db.schema
    .createIndex("email_schedule_reservoir_lead_idx")
    .on("email_schedule_reservoir")
    .column("lead_id")
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("email_schedule_reservoir").execute();
  await db.schema.dropIndex("email_schedules_due_idx").execute();
  for (const column of [
    "filter_preset_id",
    "export_format_id",
    "interval_value",
    "interval_unit",
    "recipients",
    "distribution_mode",
    "full_copy_recipients",
    "max_leads_per_email",
    "combined_file_enabled",
    "combined_recipients",
    "combined_columns_position",
    "last_sent_at",
    "total_sent_count",
    "next_run_at",
    "watermark_lead_id",
    "run_claimed_at",
  ]) {
    await db.schema.alterTable("email_schedules").dropColumn(column).execute();
  }
}
