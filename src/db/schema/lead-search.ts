import type { ColumnType } from "kysely";

type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

/**
 * The lead query slots of an account (10 rows per account): a slot with a token and an expiry
 * in the future is taken by a running lead query (search or preview) of some process. Unlogged;
 * `expires_at` frees a slot whose process died.
 */
export interface LeadQuerySlotsTable {
  account_id: number;
  slot: number;
  token: string | null;
  expires_at: NullableTimestamp;
}

/**
 * Tables of the lead search. The `leads.search_text` column and the narrow search table
 * `lead_search` (written by triggers on `leads`, docs/search.md) are read through `sql` only.
 */
export interface LeadSearchTables {
  lead_query_slots: LeadQuerySlotsTable;
}
