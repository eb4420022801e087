import { type Kysely, sql } from "kysely";

// Every API process keeps a short-lived cache of API-key lookups. These triggers tell every
// process (LISTEN auth_cache) when what authentication depends on changes: a key updated (revoked,
// renamed) or deleted, an account's plan or subscription status changed, an account deleted. The
// payload is the account id ('*' after a TRUNCATE: forget everything). NOTIFY is delivered at
// commit, so a rolled-back change notifies nobody.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function auth_cache_notify_key() returns trigger language plpgsql as $$
    begin
      perform pg_notify('auth_cache', old.account_id::text);
      return null;
    end $$`.execute(db);
  await sql`
    create function auth_cache_notify_account() returns trigger language plpgsql as $$
    begin
      perform pg_notify('auth_cache', old.id::text);
      return null;
    end $$`.execute(db);
  await sql`
    create function auth_cache_notify_all() returns trigger language plpgsql as $$
    begin
      perform pg_notify('auth_cache', '*');
      return null;
    end $$`.execute(db);

  await sql`
    create trigger api_keys_auth_cache after update or delete on api_keys
    for each row execute function auth_cache_notify_key()`.execute(db);
  await sql`
    create trigger api_keys_auth_cache_truncate after truncate on api_keys
    for each statement execute function auth_cache_notify_all()`.execute(db);
  await sql`
    create trigger accounts_auth_cache after update of plan, subscription_status on accounts
    for each row
    when (old.plan is distinct from new.plan or old.subscription_status is distinct from new.subscription_status)
    execute function auth_cache_notify_account()`.execute(db);
  await sql`
    create trigger accounts_auth_cache_delete after delete on accounts
    for each row execute function auth_cache_notify_account()`.execute(db);
  await sql`
    create trigger accounts_auth_cache_truncate after truncate on accounts
    for each statement execute function auth_cache_notify_all()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists accounts_auth_cache_truncate on accounts`.execute(db);
  await sql`drop trigger if exists accounts_auth_cache_delete on accounts`.execute(db);
  await sql`drop trigger if exists accounts_auth_cache on accounts`.execute(db);
  await sql`drop trigger if exists api_keys_auth_cache_truncate on api_keys`.execute(db);
  await sql`drop trigger if exists api_keys_auth_cache on api_keys`.execute(db);
  await sql`drop function if exists auth_cache_notify_all()`.execute(db);
  await sql`drop function if exists auth_cache_notify_account()`.execute(db);
  await sql`drop function if exists auth_cache_notify_key()`.execute(db);
}
