import { sql } from "kysely";
import type { Db } from "../../db/database.js";

/**
 * Channel told once an import has committed leads (no payload). The schema types cache of every
 * API process rebuilds on it (`src/leads/schema-types.ts`).
 */
export const LEADS_IMPORTED_CHANNEL = "leads_imported";

/**
 * Tells every process that an import has written leads: one NOTIFY, sent on its own after the
 * import's batches have committed (each batch commits on its own, see `batch-writer.ts`), so a
 * listener that rebuilds on it sees every row. Once per import, never per batch: a big import is
 * not slowed and listeners rebuild once, not continuously.
 */
export async function announceImportedLeads(db: Db): Promise<void> {
  await sql`select pg_notify(${LEADS_IMPORTED_CHANNEL}, '')`.execute(db);
}
