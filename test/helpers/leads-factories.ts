import { randomBytes } from "node:crypto";
import type { Insertable } from "kysely";
import type { Db } from "../../src/db/database.js";
import type { LeadsTable } from "../../src/db/schema/leads.js";

let sequence = 0;

/** A word no other test uses (10 random letters), to keep each test's leads apart in a shared database. */
export function uniqueWord(prefix = "zq"): string {
  const letters = Array.from(randomBytes(10), (b) => String.fromCharCode(97 + (b % 26))).join("");
  return `${prefix}${letters}`;
}

export type LeadInput = Partial<Omit<Insertable<LeadsTable>, "id">>;

/** Inserts one lead (a plausible small business; any column can be overridden); returns its id. */
export async function buildLead(db: Db, overrides: LeadInput = {}): Promise<number> {
  sequence += 1;
  const row = await db
    .insertInto("leads")
    .values({
      external_id: `ext-${sequence}-${Date.now()}`,
      company_name: `Business ${sequence}`,
      registered_url: null,
      crawled_url: null,
      email: `info${sequence}@example.com`,
      phone: "(512) 555-0142",
      street: `${sequence} Main St`,
      city: "Austin",
      state: "TX",
      zip: "78701",
      country: "US",
      category: "Services",
      description: "A local business.",
      stars: 4.5,
      review_count: 10,
      last_buying_signal: new Date(Date.UTC(2026, 0, 1) + sequence * 1000),
      last_updated: new Date(Date.UTC(2026, 0, 1) + sequence * 1000),
      social_profiles: JSON.stringify({}),
      updated_at: new Date(),
      ...overrides,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Inserts `count` leads built by `make(i)`; returns their ids in order. */
export async function buildLeads(db: Db, count: number, make: (i: number) => LeadInput): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i += 1) ids.push(await buildLead(db, make(i)));
  return ids;
}

/** Marks leads as already received by an account (rows in its lead export history). */
export async function markReceived(
  db: Db,
  accountId: number,
  leadIds: number[],
  method = "dashboard",
): Promise<void> {
  if (leadIds.length === 0) return;
  await db
    .insertInto("lead_export_history")
    .values(
      leadIds.map((lead_id) => ({
        account_id: accountId,
        lead_id,
        exported_at: new Date(Date.UTC(2025, 0, 1)),
        export_method: method,
        lead_snapshot: null,
      })),
    )
    .execute();
}
