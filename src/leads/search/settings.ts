import { sql } from "kysely";
import { createDatabase, type Db, type Trx } from "../../db/database.js";

/**
 * The settings every lead query over the whole lead database runs with (docs/search.md "The
 * search's settings"):
 * - `work_mem` 64 MB: the default 4 MB made the trigram bitmaps of common terms lossy at 5M leads
 *   (1.4 million rows rechecked for a search of 4,444 matches) and spilled 350,000 matches to disk;
 * - no parallel workers (2026-11-27): on the 2-core machine the figures are measured on, without
 *   huge pages, a worker started per query spends longer mapping the shared buffers it reads than
 *   it saves: a broad search's count took 350 ms with 2 workers and 95 ms without any, narrow and
 *   filtered searches the same either way (docs/performance.md). On a server with more cores and
 *   huge pages for the shared buffers, raise `max_parallel_workers_per_gather`; the three settings
 *   after it then price and place the workers: start-up priced as on a machine whose cores are free
 *   for them (PostgreSQL's defaults price a worker at 1,000 rows), and the leader only gathering
 *   what the workers find (scanning as well, it made them wait on it);
 * - no Materialize nodes where another plan exists: an account whose history entries were written
 *   after the table's last ANALYZE is estimated at about 1 entry, and the planner then joined the
 *   matches to the account's entries as a nested loop over a materialized copy of them, checking
 *   every match against every entry (24.5 s for 28,899 matches and 10,869 entries, against 84 ms
 *   as a hash join);
 * - a 60 s statement timeout, well below a lead query slot's lifetime (capacity.ts).
 */
export const SEARCH_SETTINGS = {
  work_mem: "64MB",
  max_parallel_workers_per_gather: "0",
  parallel_setup_cost: "10",
  parallel_tuple_cost: "0.001",
  parallel_leader_participation: "off",
  enable_material: "off",
  statement_timeout: "60000",
} as const;

/** Longest a lead query may run, in milliseconds (SEARCH_SETTINGS.statement_timeout). */
export const SEARCH_STATEMENT_TIMEOUT_MS = Number(SEARCH_SETTINGS.statement_timeout);

/** Connections of a process's search pool: lead queries of every account at once. */
export const SEARCH_POOL_SIZE = 10;

/**
 * The pool `GET /leads` and `GET /leads/preview` run their search statement on: its connections
 * start with SEARCH_SETTINGS as session settings, so a search is one plain statement with no
 * transaction around it. Only the search statement runs there: the rest of a search request
 * (slot, balance, charge) keeps PostgreSQL's defaults on the main pool, where cheap parallel
 * start-up would make its small statements go parallel too.
 */
export function createSearchDatabase(connectionString: string, max = SEARCH_POOL_SIZE): Db {
  const options = Object.entries(SEARCH_SETTINGS)
    .map(([name, value]) => `-c ${name}=${value}`)
    .join(" ");
  return createDatabase(connectionString, max, options).db;
}

/**
 * SEARCH_SETTINGS for the rest of the caller's transaction, in one statement: for lead queries
 * that must run in a transaction with other statements (the export's and the e-mail schedules'
 * candidate selection, which lock and record what they select).
 */
export async function tuneSearch(trx: Trx): Promise<void> {
  const settings = Object.entries(SEARCH_SETTINGS).map(
    ([name, value]) => sql`set_config(${name}, ${value}, true)`,
  );
  await sql`select ${sql.join(settings)}`.execute(trx);
}
