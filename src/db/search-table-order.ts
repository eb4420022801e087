import { sql, type QueryExecutorProvider } from "kysely";

/**
 * How full PostgreSQL fills each page of `lead_search` (percent): the rest stays free, so a
 * changed row (a new buying signal, say) is written on its own page and keeps its place in state
 * order (docs/search.md, "`lead_search` in state order").
 */
export const SEARCH_TABLE_FILLFACTOR = 90;

/**
 * Rewrites `lead_search` in state order (then id), with its indexes, through a temporary index
 * on `(state, id)` that CLUSTER sorts by; then analyzes it. A narrow search's trigram look-ups then
 * skip to its state's part of the table instead of decoding the posting lists of every state
 * (docs/search.md). Runs in the caller's transaction and holds an exclusive lock on
 * `lead_search` until it commits: searches it serves and writes of leads wait (about 2 minutes at
 * 5,000,000 leads). Rows added later go where there is room, so run it again after a large import
 * (`npm run admin -- order-search-table`). The migration `2026_11_28_0100_search_state_order`
 * runs it too, so a change here changes what that migration does where it has not run yet.
 */
export async function orderSearchTableByState(trx: QueryExecutorProvider): Promise<void> {
  await sql`select set_config('maintenance_work_mem', '256MB', true)`.execute(trx);
  await sql`create index lead_search_state_order_idx on lead_search (state, id)`.execute(trx);
  await sql`cluster lead_search using lead_search_state_order_idx`.execute(trx);
  // No search needs it (107 MB at 5M to maintain); a kept `(state)` btree invited plans that read
  // a whole state's rows (measured at 5M: p50 24 -> 208 ms).
  await sql`drop index lead_search_state_order_idx`.execute(trx);
  await sql`analyze lead_search`.execute(trx);
}
