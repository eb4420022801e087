import { type Kysely, sql } from "kysely";

// The lead reservoir of POST /leads/export: leads that matched an export but were left out by
// its `maxLeads` cap. The account's next export takes those still matching its filters first.
// One row per (account, lead); an entry stops counting at `expires_at` and is removed when the
// lead is exported.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("lead_reservoir")
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("lead_id", "integer", (c) => c.notNull().references("leads.id").onDelete("cascade"))
    .addColumn("added_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("lead_reservoir_pkey", ["account_id", "lead_id"])
    .execute();
  await db.schema.createIndex("lead_reservoir_lead_idx").on("lead_reservoir").column("lead_id").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("lead_reservoir").execute();
}
