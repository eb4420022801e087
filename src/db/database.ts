import { Kysely, Migrator, PostgresDialect, type Transaction } from "kysely";
import pg from "pg";
import { migrations } from "./migrations/index.js";
import type { Database } from "./schema.js";

export type Db = Kysely<Database>;
export type Trx = Transaction<Database>;
/** Either the pool or an open transaction: functions that only read or write once accept both. */
export type DbOrTrx = Db | Trx;

// int8 (bigint) values are returned as strings by default; counts and sums we read fit in a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (value) => Number(value));

/** SQL texts of hot queries run as named prepared statements, with their statement names. */
const preparedStatements = new Map<string, string>();

/**
 * Marks a compiled query (built once with placeholder parameters, run with
 * `db.executeQuery({ ...query, parameters })`) to be run as a named prepared statement: Postgres
 * parses and plans it once per connection instead of on every call. Only for fixed SQL texts
 * selecting explicit columns (a `select *` would break when a column is added while running).
 */
export function prepared<Q extends { sql: string }>(query: Q): Q {
  if (!preparedStatements.has(query.sql)) {
    preparedStatements.set(query.sql, `svc_${preparedStatements.size + 1}`);
  }
  return query;
}

/** Makes a pool client run the SQL texts registered with `prepared` as named statements. */
function namePreparedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((text: unknown, ...rest: unknown[]) => {
    const name = typeof text === "string" ? preparedStatements.get(text) : undefined;
    return name ? query({ name, text, values: rest[0] }, ...rest.slice(1)) : query(text, ...rest);
  }) as typeof client.query;
}

/** Opens a pool and a Kysely instance over it. */
export function createDatabase(connectionString: string, max = 20): { db: Db; pool: pg.Pool } {
  const pool = new pg.Pool({ connectionString, max });
  // An idle or checked-out client that loses its connection (for example while the server shuts
  // down) emits an error; the pool replaces it on next use, so these are not process failures.
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
  pool.on("connect", namePreparedStatements);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, pool };
}

/**
 * A small pool for rate-limit counters. Their commits do not wait for the WAL flush
 * (`synchronous_commit=off`): a crash can lose the last few increments of a counter, never
 * money or customer data, and every request is spared a disk flush.
 */
export function createCounterPool(connectionString: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString, max, options: "-c synchronous_commit=off" });
  pool.on("error", () => {});
  return pool;
}

/** Applies every pending migration; throws on the first failure. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the migrator works on any schema
export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error || failed) {
    throw new Error(`migration ${failed?.migrationName ?? ""} failed: ${String(error)}`);
  }
}
