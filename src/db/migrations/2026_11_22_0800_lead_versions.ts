import { type Kysely, sql } from "kysely";

/** The advisory lock ordering deliveries against lead changes (LEAD_VERSION_LOCK of src/leads/versions.ts). */
const LEAD_VERSION_LOCK = 7_246_008;

// Immutable lead versions, so the lead export history can name the data a lead had when it was
// delivered instead of copying it (about 1.5 KB of JSON per lead and delivery).
// - `leads.version` counts changes of a lead's data; an update that changes nothing but
//   `updated_at` keeps the version.
// - `lead_export_history.lead_version` is the version delivered (null on entries that carry a
//   `lead_snapshot` copy instead).
// - `lead_versions` keeps the old row (same columns as `leads`) when a change replaces a version
//   some history entry names; a version nobody received is not kept.
// Race: a delivery recorded while a change is in flight must either see the new version or have
// its version kept by the change. Recording takes LEAD_VERSION_LOCK shared before reading the
// versions and holds it to its commit. A change tries the lock exclusively without waiting: with
// it (no delivery in flight), it keeps the old version only when an entry names it; without it (a
// delivery may be in flight), it keeps the old version anyway. So a delivery only ever waits for
// one changing transaction to commit, and nothing waits for a long delivery (an export writing
// its files).
// Deleting a lead keeps its delivered version the same way: a history entry outlives its lead
// (the document's refresh reports "a lead no longer in the database"), so the entries lose their
// foreign keys. Those were also most of the cost of recording a 100,000-lead export (two
// constraint checks per row); an account's entries go with the account through a trigger instead.
// The unique key becomes (lead_id, account_id): the same constraint for the sticky rule, and the
// index the version check looks a lead up in.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table leads add column version integer not null default 1`.execute(db);
  await sql`create table lead_versions (like leads)`.execute(db);
  await sql`alter table lead_versions add primary key (id, version)`.execute(db);
  await sql`alter table lead_export_history add column lead_version integer`.execute(db);
  await sql`alter table lead_export_history drop constraint lead_export_history_lead_id_fkey`.execute(db);
  await sql`alter table lead_export_history drop constraint lead_export_history_account_id_fkey`.execute(db);
  await sql`alter table lead_export_history drop constraint lead_export_history_account_lead_key`.execute(db);
  await sql`
    alter table lead_export_history
    add constraint lead_export_history_lead_account_key unique (lead_id, account_id)`.execute(db);
  await sql`
    create function lead_export_history_forget_account() returns trigger language plpgsql as $$
    begin
      delete from lead_export_history where account_id = old.id;
      return old;
    end $$`.execute(db);
  await sql`
    create trigger accounts_forget_lead_export_history after delete on accounts
    for each row execute function lead_export_history_forget_account()`.execute(db);
  await sql`
    create function lead_keep_if_delivered(gone leads) returns void language plpgsql as $$
    begin
      if not pg_try_advisory_xact_lock(${sql.lit(LEAD_VERSION_LOCK)}) or exists (
        select 1 from lead_export_history where lead_id = gone.id and lead_version = gone.version
      ) then
        insert into lead_versions select (gone).* on conflict do nothing;
      end if;
    end $$`.execute(db);
  await sql`
    create function leads_keep_delivered_version() returns trigger language plpgsql as $$
    declare
      unversioned constant text[] := array['updated_at', 'version', 'search_text'];
    begin
      if (to_jsonb(new) - unversioned) = (to_jsonb(old) - unversioned) then
        new.version := old.version;
        return new;
      end if;
      new.version := old.version + 1;
      perform lead_keep_if_delivered(old);
      return new;
    end $$`.execute(db);
  await sql`
    create function leads_keep_deleted_version() returns trigger language plpgsql as $$
    begin
      perform lead_keep_if_delivered(old);
      return old;
    end $$`.execute(db);
  await sql`
    create trigger leads_keep_delivered_version before update on leads
    for each row execute function leads_keep_delivered_version()`.execute(db);
  await sql`
    create trigger leads_keep_deleted_version before delete on leads
    for each row execute function leads_keep_deleted_version()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists leads_keep_deleted_version on leads`.execute(db);
  await sql`drop trigger if exists leads_keep_delivered_version on leads`.execute(db);
  await sql`drop function if exists leads_keep_deleted_version()`.execute(db);
  await sql`drop function if exists leads_keep_delivered_version()`.execute(db);
  await sql`drop function if exists lead_keep_if_delivered(leads)`.execute(db);
  await sql`drop trigger if exists accounts_forget_lead_export_history on accounts`.execute(db);
  await sql`drop function if exists lead_export_history_forget_account()`.execute(db);
  await sql`alter table lead_export_history drop constraint lead_export_history_lead_account_key`.execute(db);
  await sql`
    alter table lead_export_history
    add constraint lead_export_history_account_lead_key unique (account_id, lead_id),
    add constraint lead_export_history_account_id_fkey foreign key (account_id) references accounts (id) on delete cascade,
    add constraint lead_export_history_lead_id_fkey foreign key (lead_id) references leads (id) on delete cascade`.execute(
    db,
  );
  await sql`alter table lead_export_history drop column if exists lead_version`.execute(db);
  await sql`drop table if exists lead_versions`.execute(db);
  await sql`alter table leads drop column if exists version`.execute(db);
}
