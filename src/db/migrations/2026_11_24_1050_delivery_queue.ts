import { sql, type Kysely } from "kysely";

// Automatic deliveries are claimed in batches by the `integrations__deliver` task (issue 12,
// docs/events.md "The delivery queue"): `next_attempt_at` is set exactly while a delivery waits
// for an automatic attempt (due when it is past; a claimed one holds a lease there), and a
// partial index finds the due ones. A job no longer stands for one delivery: jobs only wake the
// claimers.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create index integration_deliveries_due_idx
    on integration_deliveries (next_attempt_at) where next_attempt_at is not null`.execute(db);
  await sql`
    update integration_deliveries set next_attempt_at = now()
    where automatic and not parked and completed_at is null and next_attempt_at is null
      and status in ('pending', 'queued')`.execute(db);
  await sql`
    create or replace function integrations_requeue_parked() returns trigger language plpgsql as $$
    begin
      update integration_deliveries set parked = false, next_attempt_at = now()
      where integration_id = new.id and parked;
      if found then
        perform graphile_worker.add_job('integrations__deliver', '{}'::json, max_attempts => 25);
      end if;
      return null;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function integrations_requeue_parked() returns trigger language plpgsql as $$
    begin
      perform graphile_worker.add_jobs(array(
        select row('integrations__deliver', json_build_object('deliveryId', d.id), null, null, 25,
                   null, null, null)::graphile_worker.job_spec
        from integration_deliveries d
        where d.integration_id = new.id and d.parked));
      update integration_deliveries set parked = false, next_attempt_at = null
      where integration_id = new.id and parked;
      return null;
    end $$`.execute(db);
  await sql`drop index integration_deliveries_due_idx`.execute(db);
}
