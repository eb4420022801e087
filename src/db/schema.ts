import type { AccountTables } from "./schema/accounts.js";
import type { LeadTables } from "./schema/leads.js";

export type { AccountRow, ApiKeyRow } from "./schema/accounts.js";

/**
 * The database as Kysely sees it: one interface per area in `schema/`, joined here. Row types stay
 * in the repositories.
 */
export interface Database extends AccountTables, LeadTables {}
