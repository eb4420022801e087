import { type Kysely, sql } from "kysely";

// The narrow search table of the common search shapes (docs/search.md).
//
// `lead_search` holds, per lead, only what those searches read: the searched text (the same
// value as `leads.search_text`), the upper-cased state and the default sort key. A broad search
// (no state, tens of thousands of keyword matches) has to recheck and count every match; on the
// wide `leads` table (about 1 KB per row) that read nearly every page of a 1 GB table, here it
// reads a table about 8 times smaller.
//
// It is derived from `leads` only, and kept equal to it by triggers, in the transaction of every
// change (imports, the AI classification, any other writer): inserted leads are added (one
// statement per inserting statement, over its transition table, so a batch of 1,000 imported
// leads costs one more insert, not 1,000 trigger calls), updated leads whose searched values
// changed are rewritten, deleted leads removed, a truncate empties it.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table lead_search (
      id integer primary key,
      search_text text not null,
      state text,
      last_buying_signal timestamptz
    )`.execute(db);

  // Each trigger writes the same values: the searched text, upper(state), the default sort key.
  await sql`
    create function lead_search_rows_insert() returns trigger language plpgsql as $$
    begin
      insert into lead_search (id, search_text, state, last_buying_signal)
      select n.id, n.search_text, upper(n.state), n.last_buying_signal from new_leads n
      on conflict (id) do update set search_text = excluded.search_text, state = excluded.state,
        last_buying_signal = excluded.last_buying_signal;
      return null;
    end $$`.execute(db);
  await sql`
    create function lead_search_row_update() returns trigger language plpgsql as $$
    begin
      insert into lead_search (id, search_text, state, last_buying_signal)
      values (new.id, new.search_text, upper(new.state), new.last_buying_signal)
      on conflict (id) do update set search_text = excluded.search_text, state = excluded.state,
        last_buying_signal = excluded.last_buying_signal;
      -- A changed id (never done by the service) leaves no row behind under the old one.
      if new.id <> old.id then
        delete from lead_search where id = old.id;
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create function lead_search_rows_delete() returns trigger language plpgsql as $$
    begin
      delete from lead_search s using old_leads o where s.id = o.id;
      return null;
    end $$`.execute(db);
  await sql`
    create function lead_search_rows_truncate() returns trigger language plpgsql as $$
    begin
      truncate lead_search;
      return null;
    end $$`.execute(db);

  // Triggers first, then the copy, in the migration's one transaction: CREATE TRIGGER locks
  // `leads` against writes until the commit, so no change falls between the copy and the triggers.
  await sql`
    create trigger leads_search_rows_insert after insert on leads
    referencing new table as new_leads
    for each statement execute function lead_search_rows_insert()`.execute(db);
  // Updates: per row, only when a searched value changed. The WHEN condition is checked without
  // calling the function, so the many updates that leave these values alone (a re-import of
  // unchanged leads, version bookkeeping) cost next to nothing, and no transition table copies
  // every updated row.
  await sql`
    create trigger leads_search_row_update after update on leads
    for each row
    when (new.id is distinct from old.id or new.search_text is distinct from old.search_text
      or new.state is distinct from old.state or new.last_buying_signal is distinct from old.last_buying_signal)
    execute function lead_search_row_update()`.execute(db);
  await sql`
    create trigger leads_search_rows_delete after delete on leads
    referencing old table as old_leads
    for each statement execute function lead_search_rows_delete()`.execute(db);
  await sql`
    create trigger leads_search_rows_truncate after truncate on leads
    for each statement execute function lead_search_rows_truncate()`.execute(db);

  // Existing databases: copy every lead, then build the indexes once over the copy.
  await sql`select set_config('maintenance_work_mem', '256MB', true)`.execute(db);
  await sql`
    insert into lead_search (id, search_text, state, last_buying_signal)
    select id, search_text, upper(state), last_buying_signal from leads order by id`.execute(db);
  await sql`create index lead_search_text_trgm_idx on lead_search using gin (search_text gin_trgm_ops)`.execute(
    db,
  );
  await sql`create index lead_search_state_idx on lead_search (state)`.execute(db);
  await sql`analyze lead_search`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists leads_search_rows_truncate on leads`.execute(db);
  await sql`drop trigger if exists leads_search_rows_delete on leads`.execute(db);
  await sql`drop trigger if exists leads_search_row_update on leads`.execute(db);
  await sql`drop trigger if exists leads_search_rows_insert on leads`.execute(db);
  await sql`drop function if exists lead_search_rows_truncate()`.execute(db);
  await sql`drop function if exists lead_search_rows_delete()`.execute(db);
  await sql`drop function if exists lead_search_row_update()`.execute(db);
  await sql`drop function if exists lead_search_rows_insert()`.execute(db);
  await sql`drop table if exists lead_search`.execute(db);
}
