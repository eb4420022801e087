import { type Kysely, sql } from "kysely";

// The real clients' contact filter and company-name sort served by `lead_search` (docs/search.md,
// "What lead_search holds").
//
// `has_email` / `has_phone`: whether the lead's primary e-mail / phone has a non-blank value (what
// `emailPrimaryEmptyFilter` / `phonePrimaryEmptyFilter` test); `company_name`: the lead's company
// name as it is (the `wCompanyName` sort key), with an index in that order so a broad page sorted
// by name is walked like the default order. The triggers write them with the other values.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table lead_search
      add column has_email boolean not null default false,
      add column has_phone boolean not null default false,
      add column company_name text`.execute(db);

  await sql`
    create or replace function lead_search_rows_insert() returns trigger language plpgsql as $$
    begin
      insert into lead_search (id, search_text, state, last_buying_signal, has_email, has_phone, company_name)
      select n.id, n.search_text, upper(n.state), n.last_buying_signal,
        coalesce(btrim(n.email), '') <> '', coalesce(btrim(n.phone), '') <> '', n.company_name
      from new_leads n
      on conflict (id) do update set search_text = excluded.search_text, state = excluded.state,
        last_buying_signal = excluded.last_buying_signal, has_email = excluded.has_email,
        has_phone = excluded.has_phone, company_name = excluded.company_name;
      return null;
    end $$`.execute(db);
  await sql`
    create or replace function lead_search_row_update() returns trigger language plpgsql as $$
    begin
      insert into lead_search (id, search_text, state, last_buying_signal, has_email, has_phone, company_name)
      values (new.id, new.search_text, upper(new.state), new.last_buying_signal,
        coalesce(btrim(new.email), '') <> '', coalesce(btrim(new.phone), '') <> '', new.company_name)
      on conflict (id) do update set search_text = excluded.search_text, state = excluded.state,
        last_buying_signal = excluded.last_buying_signal, has_email = excluded.has_email,
        has_phone = excluded.has_phone, company_name = excluded.company_name;
      -- A changed id (never done by the service) leaves no row behind under the old one.
      if new.id <> old.id then
        delete from lead_search where id = old.id;
      end if;
      return null;
    end $$`.execute(db);
  // The update trigger fires for the new columns' sources too.
  await sql`drop trigger leads_search_row_update on leads`.execute(db);
  await sql`
    create trigger leads_search_row_update after update on leads
    for each row
    when (new.id is distinct from old.id or new.search_text is distinct from old.search_text
      or new.state is distinct from old.state or new.last_buying_signal is distinct from old.last_buying_signal
      or new.email is distinct from old.email or new.phone is distinct from old.phone
      or new.company_name is distinct from old.company_name)
    execute function lead_search_row_update()`.execute(db);

  // Existing rows, in the migration's transaction (the trigger change locks `leads` against writes).
  await sql`select set_config('maintenance_work_mem', '256MB', true)`.execute(db);
  await sql`
    update lead_search s set
      has_email = coalesce(btrim(l.email), '') <> '',
      has_phone = coalesce(btrim(l.phone), '') <> '',
      company_name = l.company_name
    from leads l where l.id = s.id`.execute(db);
  // The update wrote a second version of every row: rewrite the table compactly (in id order, as
  // the copy first wrote it) with its indexes, or every search would read twice the pages until
  // the dead half is reused. CLUSTER with a table and index runs inside the migration's transaction.
  await sql`cluster lead_search using lead_search_pkey`.execute(db);
  await sql`create index lead_search_company_name_idx on lead_search (company_name, id)`.execute(db);
  await sql`analyze lead_search`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists lead_search_company_name_idx`.execute(db);
  await sql`drop trigger leads_search_row_update on leads`.execute(db);
  await sql`
    create trigger leads_search_row_update after update on leads
    for each row
    when (new.id is distinct from old.id or new.search_text is distinct from old.search_text
      or new.state is distinct from old.state or new.last_buying_signal is distinct from old.last_buying_signal)
    execute function lead_search_row_update()`.execute(db);
  await sql`
    create or replace function lead_search_rows_insert() returns trigger language plpgsql as $$
    begin
      insert into lead_search (id, search_text, state, last_buying_signal)
      select n.id, n.search_text, upper(n.state), n.last_buying_signal from new_leads n
      on conflict (id) do update set search_text = excluded.search_text, state = excluded.state,
        last_buying_signal = excluded.last_buying_signal;
      return null;
    end $$`.execute(db);
  await sql`
    create or replace function lead_search_row_update() returns trigger language plpgsql as $$
    begin
      insert into lead_search (id, search_text, state, last_buying_signal)
      values (new.id, new.search_text, upper(new.state), new.last_buying_signal)
      on conflict (id) do update set search_text = excluded.search_text, state = excluded.state,
        last_buying_signal = excluded.last_buying_signal;
      if new.id <> old.id then
        delete from lead_search where id = old.id;
      end if;
      return null;
    end $$`.execute(db);
  await sql`alter table lead_search drop column has_email, drop column has_phone, drop column company_name`.execute(
    db,
  );
}
