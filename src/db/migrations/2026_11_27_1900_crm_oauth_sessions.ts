import { type Kysely, sql } from "kysely";

// Connecting a CRM from the dashboard (docs/dashboard.md "Connecting a CRM from the dashboard"):
// a connect link is bound to the account and either the API key or the dashboard session that
// asked for it. `api_key_id` becomes nullable and `session_id` names the session; exactly one
// of the two is set. The callback refuses a link whose key was revoked or whose session ended.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table crm_oauth_states alter column api_key_id drop not null`.execute(db);
  await sql`alter table crm_oauth_states add column session_id bigint`.execute(db);
  await sql`
    alter table crm_oauth_states add constraint crm_oauth_states_one_caller
      check ((api_key_id is null) <> (session_id is null))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from crm_oauth_states where api_key_id is null`.execute(db);
  await sql`alter table crm_oauth_states drop constraint crm_oauth_states_one_caller`.execute(db);
  await sql`alter table crm_oauth_states drop column session_id`.execute(db);
  await sql`alter table crm_oauth_states alter column api_key_id set not null`.execute(db);
}
