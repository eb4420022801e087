import {
  Kysely,
  Migrator,
  PostgresDialect,
  sql,
  type CompiledQuery,
  type QueryResult,
  type RawBuilder,
  type Transaction,
} from "kysely";
import pg from "pg";
import { to as copyTo } from "pg-copy-streams";
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

/**
 * Runs a compiled query as a named prepared statement (see `prepared`): for hot statements whose
 * SQL text is the same on every call (only parameters change), built by Kysely each time.
 */
export async function executePrepared<R>(db: DbOrTrx, query: CompiledQuery<R>): Promise<QueryResult<R>> {
  return db.executeQuery(prepared(query));
}

/** The start of a SQL text whose rows come back as arrays of unparsed text (see textRows). */
const TEXT_ROWS_MARK = "/* text rows */ ";
/** Type parsers that keep every value as the text PostgreSQL sent. */
const UNPARSED = { getTypeParser: () => (value: string) => value };

/**
 * A query whose rows come back as arrays of the values' text as PostgreSQL sent it (null for
 * NULL), in select-list order: no per-field parsing and no row objects, for reading many rows
 * whose values the SQL already formats. Run it with `.execute(db)` like any other query; its
 * `rows` are `(string | null)[]`.
 */
export function textRows(query: RawBuilder<unknown>): RawBuilder<(string | null)[]> {
  return sql<(string | null)[]>`${sql.raw(TEXT_ROWS_MARK)}${query}`;
}

/** The start of a SQL text run as `COPY (...) TO STDOUT` in CSV (see csvCopy). */
const CSV_COPY_MARK = "/* csv copy */ ";

/**
 * A query whose rows come back as CSV rendered by PostgreSQL (`COPY (query) TO STDOUT WITH
 * (FORMAT csv)`: comma, `"` quoting of values holding a comma, quote, CR or LF, LF after each row,
 * NULL as an empty field): one row holding one Buffer. COPY takes no bind parameters, so every
 * value in `query` must be a literal (`sql.lit`); a parameter makes it fail.
 */
export function csvCopy(query: RawBuilder<unknown>): RawBuilder<[Buffer]> {
  return sql<[Buffer]>`${sql.raw(CSV_COPY_MARK)}${query}`;
}

/** Runs a csvCopy query on a client and collects its output. */
async function runCsvCopy(
  query: (submittable: ReturnType<typeof copyTo>) => unknown,
  text: string,
  values: unknown,
): Promise<{ command: string; rowCount: number; rows: [Buffer][] }> {
  if (Array.isArray(values) && values.length > 0) {
    throw new Error("a csvCopy query takes no parameters (use sql.lit)");
  }
  const stream = copyTo(`copy (${text.slice(CSV_COPY_MARK.length)}) to stdout with (format csv)`);
  query(stream);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return { command: "COPY", rowCount: stream.rowCount, rows: [[Buffer.concat(chunks)]] };
}

/**
 * Makes a pool client run the SQL texts registered with `prepared` as named statements,
 * `textRows` queries in array row mode without type parsing, and `csvCopy` queries as COPY.
 */
function adaptQueries(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((text: unknown, ...rest: unknown[]) => {
    if (typeof text !== "string") return query(text, ...rest);
    const name = preparedStatements.get(text);
    if (name) return query({ name, text, values: rest[0] }, ...rest.slice(1));
    if (text.startsWith(TEXT_ROWS_MARK)) {
      return query({ text, values: rest[0], rowMode: "array", types: UNPARSED }, ...rest.slice(1));
    }
    if (text.startsWith(CSV_COPY_MARK)) return runCsvCopy(query, text, rest[0]);
    return query(text, ...rest);
  }) as typeof client.query;
}

/**
 * How long a pooled connection stays open unused (pg's default is 10 s). A new PostgreSQL backend
 * maps the shared buffers page by page as it first reads them; on a host without huge pages a
 * 100,000-lead export on fresh backends took about 1.5 s longer than on warm ones
 * (docs/performance.md, 2026-11-28). Kept 5 minutes, the backends of a working service stay warm.
 */
export const POOL_IDLE_TIMEOUT_MS = 5 * 60_000;

/**
 * Opens a pool and a Kysely instance over it; `options` are settings its connections start with
 * (`-c name=value ...`).
 */
export function createDatabase(
  connectionString: string,
  max = 20,
  options?: string,
): { db: Db; pool: pg.Pool } {
  const pool = new pg.Pool({
    connectionString,
    max,
    idleTimeoutMillis: POOL_IDLE_TIMEOUT_MS,
    // Idle connections do not keep a process alive that has nothing else left to do.
    allowExitOnIdle: true,
    ...(options ? { options } : {}),
  });
  // An idle or checked-out client that loses its connection (for example while the server shuts
  // down) emits an error; the pool replaces it on next use, so these are not process failures.
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
  pool.on("connect", adaptQueries);
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
    throw new Error(`migration ${failed?.migrationName ?? ""} failed: ${String(error)}`, { cause: error });
  }
}
