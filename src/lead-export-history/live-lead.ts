import type { DbOrTrx } from "../db/database.js";
import { findLeadsByIds } from "../leads/repository.js";
import { toLeadSnapshot, type LeadSnapshot } from "../leads/snapshot.js";

/**
 * The current data of the given leads in the snapshot form (database-style field names such as
 * `wCompanyName`), by lead id, so that an entry's `lead` has the same keys whether it comes from a
 * stored snapshot or from live data. Leads no longer stored are absent.
 */
export async function liveLeadData(
  db: DbOrTrx,
  leadIds: readonly number[],
): Promise<Map<number, LeadSnapshot>> {
  if (leadIds.length === 0) return new Map();
  const leads = await findLeadsByIds(db, [...new Set(leadIds)]);
  return new Map(leads.map((lead) => [lead.id, toLeadSnapshot(lead)]));
}
