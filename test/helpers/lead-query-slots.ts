import { sql } from "kysely";
import { expect } from "vitest";
import type { Db } from "../../src/db/database.js";
import { LEAD_QUERY_CAPACITY } from "../../src/leads/search/capacity.js";

/** Slots held by other lead queries of the account (as another process would hold them). */
export async function holdLeadQuerySlots(
  db: Db,
  accountId: number,
  count: number,
  expiresInMs = 60_000,
): Promise<void> {
  await db
    .insertInto("lead_query_slots")
    .values(Array.from({ length: LEAD_QUERY_CAPACITY }, (_, i) => ({ account_id: accountId, slot: i + 1 })))
    .onConflict((oc) => oc.doNothing())
    .execute();
  const free = await db
    .selectFrom("lead_query_slots")
    .select("slot")
    .where("account_id", "=", accountId)
    .where("token", "is", null)
    .orderBy("slot")
    .limit(count)
    .execute();
  expect(free).toHaveLength(count);
  await db
    .updateTable("lead_query_slots")
    .set({ token: sql`gen_random_uuid()`, expires_at: new Date(Date.now() + expiresInMs) })
    .where("account_id", "=", accountId)
    .where(
      "slot",
      "in",
      free.map((f) => f.slot),
    )
    .execute();
}
