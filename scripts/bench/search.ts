import { createAccountWithKey } from "../../src/accounts/service.js";
import { createApiKey } from "../../src/auth/service.js";
import { createDatabase, type Db, migrateToLatest } from "../../src/db/database.js";
import { STATES } from "../../src/leads/import/generate-data.js";
import { parseSearchFilters } from "../../src/leads/search/filters.js";
import { parseSearchRequest } from "../../src/leads/search/controls.js";
import { paidSearchOptions } from "../../src/leads/search/service.js";
import { sql } from "kysely";
import pg from "pg";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres } from "../../src/db/embedded.js";
import { searchPageJsonQuery, searchTableServes } from "../../src/leads/search/query.js";
import { createSearchDatabase } from "../../src/leads/search/settings.js";
import { ensureLeads, freePort, hugePagesStatus, startProcess, stopProcess } from "./lib.js";
import { CLIENT_SHAPE_COUNT, clientShapeName, clientShapeQueries, random } from "./search-shapes.js";

const LEADS = Number(process.env.BENCH_SEARCH_LEADS ?? 1_000_000);
const SEARCHES = Number(process.env.BENCH_SEARCHES ?? 200);
const WARMUP = 20;
/** Broad searches run before the broad ones are measured: they bring `lead_search` into the shared buffers. */
const BROAD_WARMUP = 10;
/** Searches of the broad shape (no state), reported beside the narrow ones. */
const BROAD_SEARCHES = Number(process.env.BENCH_BROAD_SEARCHES ?? 100);
/** Searches of each shape whose answers are checked against the query over `leads` (before lead_search). */
const CHECKED = Number(process.env.BENCH_SEARCH_CHECKED ?? 10);
const SEED = 42;
/**
 * Searches per real clients' shape (search-shapes.ts), narrow and broad alike, on average (a draw
 * of two equal keywords passes its shape's turn). About 40, so a shape's p95 (nearest rank) is
 * its third slowest search; with the 12-25 searches per shape measured until 2026-12-08 it was
 * the slowest one.
 */
const CLIENT_SEARCHES_PER_SHAPE = Number(process.env.BENCH_CLIENT_SEARCHES_PER_SHAPE ?? 40);
/** Searches run both as a preview and as a paid search, alternating, for the side-by-side figures. */
const PREVIEW_SEARCHES = Number(process.env.BENCH_PREVIEW_SEARCHES ?? 100);
/** Keys the searches are spread over (600 requests per minute each). */
const KEYS = 10;

/** Keywords of the kind a client types: trade stems and name words of the generated leads. */
const POSITIVE = [
  "plumb",
  "roof",
  "hvac",
  "heating",
  "landscap",
  "lawn",
  "dental",
  "auto",
  "bakery",
  "salon",
  "law",
  "electric",
  "paint",
  "pest",
  "clean",
  "chiropract",
  "vet",
  "fitness",
  "yoga",
  "account",
  "insurance",
  "realty",
  "coffee",
  "pizza",
  "taco",
  "bbq",
  "florist",
  "photo",
  "construct",
  "remodel",
  "floor",
  "pool",
  "tree",
  "moving",
  "locksmith",
  "garage",
  "solar",
  "fenc",
  "concrete",
  "groom",
  "daycare",
  "tutor",
  "therapy",
  "spa",
  "nail",
  "tattoo",
  "brew",
  "winery",
  "marketing",
  "repair",
  "towing",
  "car wash",
  "optometr",
  "eye care",
  "summit",
  "golden",
  "premier",
  "family",
];
const NEGATIVE = ["commercial", "pros", "llc", "group", "center", "studio", "co.", "sons", "the", "service"];

/** `count` query strings: two positive keywords, one state, one negative keyword, limit 50. */
function searchQueries(count: number, seed: number, withState = true): string[] {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const queries: string[] = [];
  while (queries.length < count) {
    const a = pick(POSITIVE);
    const b = pick(POSITIVE);
    if (a === b) continue;
    const state = pick(STATES).code;
    const params = new URLSearchParams({
      positiveKeywords: `${a},${b}`,
      ...(withState ? { stateInclude: state } : {}),
      negativeKeywords: pick(NEGATIVE),
      limit: "50",
    });
    queries.push(params.toString());
  }
  return queries;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return Number(sorted[Math.max(0, index)]!.toFixed(1));
}

function summary(ms: number[]): { p50: number; p95: number; p99: number; mean: number; max: number } {
  const sorted = [...ms].sort((x, y) => x - y);
  return {
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    mean: Number((ms.reduce((s, v) => s + v, 0) / Math.max(1, ms.length)).toFixed(1)),
    max: Number((sorted[sorted.length - 1] ?? 0).toFixed(1)),
  };
}

type Timed<T> = (query: string) => Promise<T & { ms: number }>;

/**
 * Runs each query directly as SQL and through HTTP, interleaved and alternating which goes
 * first, so both see the same machine load and cache; reports both and their ratio.
 */
async function measure(
  queries: string[],
  runSql: Timed<{ matches: number }>,
  runHttp: Timed<{ leads: number }>,
): Promise<Record<string, unknown>> {
  const sqlMs: number[] = [];
  const httpMs: number[] = [];
  const matches: number[] = [];
  let returned = 0;
  for (const [i, q] of queries.entries()) {
    let direct: { ms: number; matches: number };
    let http: { ms: number; leads: number };
    if (i % 2 === 0) {
      direct = await runSql(q);
      http = await runHttp(q);
    } else {
      http = await runHttp(q);
      direct = await runSql(q);
    }
    sqlMs.push(direct.ms);
    matches.push(direct.matches);
    httpMs.push(http.ms);
    returned += http.leads;
  }
  const httpSummary = summary(httpMs);
  const sqlSummary = summary(sqlMs);
  const sortedMatches = [...matches].sort((x, y) => x - y);
  const slowest = queries
    .map((q, i) => ({
      query: decodeURIComponent(q),
      sqlMs: Math.round(sqlMs[i]!),
      httpMs: Math.round(httpMs[i]!),
      matches: matches[i],
    }))
    .sort((x, y) => y.httpMs - x.httpMs)
    .slice(0, 3);
  return {
    matchesPerSearch: {
      p50: percentile(sortedMatches, 50),
      p95: percentile(sortedMatches, 95),
      max: sortedMatches[sortedMatches.length - 1] ?? 0,
    },
    leadsReturned: returned,
    httpMs: httpSummary,
    sqlMs: sqlSummary,
    ratioP50: Number((httpSummary.p50 / Math.max(0.1, sqlSummary.p50)).toFixed(2)),
    ratioP95: Number((httpSummary.p95 / Math.max(0.1, sqlSummary.p95)).toFixed(2)),
    slowest,
  };
}

/**
 * PostgreSQL's shared buffers for the search bench's own server: the search table and its
 * trigram index (about 260 MB per million leads) and the lead pages the answers read stay in
 * memory, as on a production server sized for its data (docs/search.md). At least 1 GB, 512 MB
 * per million leads.
 */
const SHARED_BUFFERS =
  process.env.BENCH_SEARCH_SHARED_BUFFERS ?? `${Math.max(1024, Math.ceil(LEADS / 1_000_000) * 512)}MB`;

/** The bench's database: its URL, and (for its own server) a restart, which may move its port. */
interface SearchDatabase {
  url: string;
  stop(): Promise<void>;
  /** Restarts its own server and returns the new URL; with DATABASE_URL, nothing. */
  restart(): Promise<string>;
  /**
   * Its own server's log entries since the last call that tell why a search was slow (see
   * SERVER_LOG_SETTINGS); with DATABASE_URL, none.
   */
  takeServerLog(): string[];
}

/**
 * Server settings of the bench's own server, so a stalled search leaves its reason in the log: the
 * plan of any statement that ran 3 s or longer (auto_explain, estimates only: no cost for the
 * others), lock waits past deadlock_timeout (1 s), and every autovacuum and autoanalyze. Two
 * searches stalled for 25-30 s once at 1M (docs/performance.md, 2026-11-28) and did not again.
 */
const SERVER_LOG_SETTINGS: Record<string, string> = {
  session_preload_libraries: "auto_explain",
  "auto_explain.log_min_duration": "3s",
  "auto_explain.log_parameter_max_length": "2000",
  log_lock_waits: "on",
  log_autovacuum_min_duration: "0",
};

/** The entries of a PostgreSQL server log text (a line that does not start with white space starts one). */
function logEntries(text: string): string[] {
  return text
    .split(/\n(?=\S)/)
    .map((entry) => entry.trimEnd())
    .filter((entry) => /duration: \d|still waiting|acquired|automatic (analyze|vacuum)/.test(entry))
    .map((entry) => (entry.length > 20_000 ? `${entry.slice(0, 20_000)} ...` : entry));
}

/**
 * The database the search bench runs on. With DATABASE_URL set: that database, as it is
 * configured. Otherwise its own embedded server with SHARED_BUFFERS (PostgreSQL's default of
 * 128 MB holds neither the search table nor its index at 1M leads), in BENCH_SEARCH_DATA_DIR when
 * set (kept, so a later run reuses its leads: useful at 5M), else in a temporary directory.
 */
export async function searchDatabase(runnerUrl: string): Promise<SearchDatabase> {
  if (process.env.DATABASE_URL)
    return { url: runnerUrl, stop: async () => {}, restart: async () => runnerUrl, takeServerLog: () => [] };
  const kept = process.env.BENCH_SEARCH_DATA_DIR;
  const dir = kept ?? mkdtempSync(join(tmpdir(), "lead-bench-search-"));
  let log: string[] = [];
  const collect = (chunk: string) => log.push(chunk.replace(/^\[STDERR\] /, ""));
  let server = await startEmbeddedPostgres(dir, collect);
  const admin = new pg.Client({ connectionString: server.urlFor("postgres") });
  await admin.connect();
  for (const [name, value] of Object.entries(SERVER_LOG_SETTINGS)) {
    await admin.query(`alter system set ${name} = '${value}'`);
  }
  await admin.query("select pg_reload_conf()");
  const current = (await admin.query("select setting from pg_settings where name = 'shared_buffers'"))
    .rows[0] as { setting: string };
  await admin.query(`alter system set shared_buffers = '${SHARED_BUFFERS.replace(/'/g, "")}'`);
  const wanted = (
    (await admin.query("select pg_size_bytes($1) / 8192 as pages", [SHARED_BUFFERS])).rows[0] as {
      pages: string;
    }
  ).pages;
  await admin.end();
  if (String(current.setting) !== String(wanted)) {
    // The setting takes effect on a restart.
    await server.stop();
    server = await startEmbeddedPostgres(dir, collect);
  }
  await server.createDatabase("bench_search");
  return {
    url: server.urlFor("bench_search"),
    stop: async () => {
      await server.stop();
      if (!kept) rmSync(dir, { recursive: true, force: true });
    },
    restart: async () => {
      await server.stop();
      server = await startEmbeddedPostgres(dir, collect);
      return server.urlFor("bench_search");
    },
    takeServerLog: () => {
      const entries = logEntries(log.join("\n"));
      log = [];
      return entries;
    },
  };
}

/** Sizes on disk, in MB: the database, the lead table and the search table (with their indexes). */
async function sizes(db: Db): Promise<Record<string, number>> {
  const { rows } = await sql<{ database: string; leads: string; lead_search: string }>`
    select pg_database_size(current_database()) as database,
      pg_total_relation_size('leads') as leads,
      pg_total_relation_size('lead_search') as lead_search`.execute(db);
  const mb = (bytes: string | undefined) => Math.round(Number(bytes ?? 0) / 1_048_576);
  return {
    databaseMb: mb(rows[0]?.database),
    leadsMb: mb(rows[0]?.leads),
    leadSearchMb: mb(rows[0]?.lead_search),
  };
}

/** Peak resident memory of a process in MB (VmHWM), or null where /proc is not available. */
function peakRssMb(pid: number | undefined): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
    return kb ? Math.round(Number(kb) / 1024) : null;
  } catch {
    return null;
  }
}

/**
 * `GET /leads` over 1,000,000 generated leads (`BENCH_SEARCH_LEADS`): 200 narrow searches (two
 * positive keywords over the four searched columns, one state, one negative keyword, limit 50)
 * and 100 broad ones (the same without the state: tens of thousands of matches each), through
 * HTTP, each against the same search SQL run directly on the database in the same run. The
 * answers of the first searches of each shape are checked against the query over `leads` that
 * served every search before `lead_search` (same total, new matches and page), and HTTP against
 * the direct SQL (same total and page).
 */
export async function benchSearch(runnerUrl: string): Promise<Record<string, unknown>> {
  const database = await searchDatabase(runnerUrl);
  try {
    const loaded = await loadLeads(database.url);
    // After an import into its own server, the searches run on the server restarted, as after a
    // kept database's import: right after a load, the same searches on the same buffers measured
    // 15-20% slower (the search table's pages spread among the load's; docs/scaling.md).
    const url = loaded.importSeconds === null ? database.url : await database.restart();
    database.takeServerLog();
    return { ...(await benchSearchOn(url, loaded)), slowStatementLog: database.takeServerLog() };
  } finally {
    await database.stop();
  }
}

/** Migrates the database and loads the generated leads unless they are there (ensureLeads). */
async function loadLeads(databaseUrl: string): Promise<{ leads: number; importSeconds: number | null }> {
  const { db } = createDatabase(databaseUrl, 4);
  try {
    await migrateToLatest(db);
    return await ensureLeads(db, LEADS, SEED);
  } finally {
    await db.destroy();
  }
}

async function benchSearchOn(
  databaseUrl: string,
  loaded: { leads: number; importSeconds: number | null },
): Promise<Record<string, unknown>> {
  const { db } = createDatabase(databaseUrl, 4);
  const searchDb = createSearchDatabase(databaseUrl, 1);
  const { accountId, apiKey } = await createAccountWithKey(db, {
    email: `bench-search-${Date.now()}@example.com`,
    plan: "enterprise",
    permanentCredits: 1_000_000,
  });
  const keys = [apiKey];
  for (let i = 1; i < KEYS; i += 1) keys.push((await createApiKey(db, accountId, `bench ${i}`)).apiKey);

  const warmup = searchQueries(WARMUP, SEED + 1);
  const broadWarmup = searchQueries(BROAD_WARMUP, SEED + 3, false);
  const narrowQueries = searchQueries(SEARCHES, SEED);
  const broadQueries = searchQueries(BROAD_SEARCHES, SEED + 2, false);
  // Enough credits that no search is capped: the cap the service passes is the spendable balance.
  const cap = 1_000_000;

  const directSql = async (query: string, useSearchTable: boolean) => {
    const { filters, controls } = parseSearchRequest(`?${query}`, ["maxCredits", "maxResults"]);
    // The statement `GET /leads` runs (its leads as JSON text), on a search pool like the service's
    // (its sessions carry the search's settings).
    const options = { ...paidSearchOptions(accountId, controls, cap), useSearchTable };
    const compiled = searchPageJsonQuery(filters, options).compile(db);
    const started = performance.now();
    const result = await searchDb.executeQuery(compiled);
    const ms = performance.now() - started;
    const rows = result.rows as { total_matches: number; new_matches: number; page_id: number | null }[];
    return {
      ms,
      matches: Number(rows[0]?.total_matches ?? 0),
      newMatches: Number(rows[0]?.new_matches ?? 0),
      cap: options.cap,
      ids: rows.flatMap((r) => (r.page_id === null ? [] : [r.page_id])),
    };
  };
  const runSql = (query: string) => directSql(query, true);

  const port = await freePort();
  const service = await startProcess(
    "src/main.ts",
    { PORT: String(port), HOST: "127.0.0.1", DATABASE_URL: databaseUrl, ROLE: "api", LOG_LEVEL: "warn" },
    `http://127.0.0.1:${port}/api/v1/health`,
  );
  let n = 0;
  const request = async (path: string, query: string) => {
    n += 1;
    const started = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/${path}?${query}`, {
      headers: { authorization: `Bearer ${keys[n % KEYS]}` },
    });
    const body = (await res.json()) as {
      data?: { leads: { id: number }[]; pagination: { total: number } };
    };
    const ms = performance.now() - started;
    if (res.status !== 200) throw new Error(`search answered ${res.status}: ${JSON.stringify(body)}`);
    return {
      ms,
      leads: body.data?.leads.length ?? 0,
      total: body.data?.pagination.total ?? -1,
      ids: body.data?.leads.map((l) => l.id) ?? [],
    };
  };
  const http = (query: string) => request("leads", query);
  /** A preview of a search's filters: the paid search's cost controls are not preview parameters. */
  const preview = (query: string) => {
    const params = new URLSearchParams(query);
    params.delete("maxCredits");
    params.delete("maxResults");
    return request("leads/preview", params.toString());
  };

  /**
   * The same searches as a preview and as a paid search, alternating which goes first: a preview
   * costs no more than the paid search of the same filters (it charges nothing and records
   * nothing, but counts every match and masks the leads the account has not received).
   */
  const previewVsPaid = async (queries: string[]) => {
    const previewMs: number[] = [];
    const paidMs: number[] = [];
    for (const [i, q] of queries.entries()) {
      if (i % 2 === 0) {
        previewMs.push((await preview(q)).ms);
        paidMs.push((await http(q)).ms);
      } else {
        paidMs.push((await http(q)).ms);
        previewMs.push((await preview(q)).ms);
      }
    }
    const previewSummary = summary(previewMs);
    const paidSummary = summary(paidMs);
    return {
      searches: queries.length,
      previewMs: previewSummary,
      paidMs: paidSummary,
      previewOverPaidP95: Number((previewSummary.p95 / Math.max(0.1, paidSummary.p95)).toFixed(2)),
    };
  };

  /** The client shapes measured one shape at a time (search-shapes.ts), HTTP against the SQL. */
  const byShape = async (queries: string[]) => {
    const out: Record<string, unknown> = {};
    for (const shape of [...new Set(queries.map(clientShapeName))]) {
      const shapeQueries = queries.filter((q) => clientShapeName(q) === shape);
      const m = await measure(shapeQueries, runSql, http);
      out[shape] = {
        searches: shapeQueries.length,
        httpMs: m.httpMs,
        sqlMs: m.sqlMs,
        ratioP95: m.ratioP95,
        matchesPerSearch: m.matchesPerSearch,
        slowest: m.slowest,
      };
    }
    return out;
  };

  /** The result checks: lead_search against the query over leads, and HTTP against the SQL. */
  const check = async (queries: string[]) => {
    let served = 0;
    for (const q of queries.slice(0, CHECKED)) {
      if (searchTableServes(parseSearchFilters(q, "query"))) served += 1;
      const before = await directSql(q, false);
      const after = await directSql(q, true);
      const same = (a: typeof before) => ({ matches: a.matches, newMatches: a.newMatches, ids: a.ids });
      if (JSON.stringify(same(before)) !== JSON.stringify(same(after))) {
        throw new Error(`lead_search and leads disagree on ${decodeURIComponent(q)}`);
      }
      const answer = await http(q);
      // The answer's total: every received match and the new ones up to the cap (maxCredits).
      const total = after.matches - after.newMatches + Math.min(after.newMatches, after.cap);
      if (answer.total !== total || JSON.stringify(answer.ids) !== JSON.stringify(after.ids)) {
        throw new Error(`HTTP and SQL disagree on ${decodeURIComponent(q)}`);
      }
    }
    return { checked: Math.min(CHECKED, queries.length), servedBySearchTable: served, agree: true };
  };

  try {
    const warm = async (queries: string[]) => {
      for (const q of queries) {
        await runSql(q);
        await http(q);
      }
    };
    await warm(warmup);
    const narrow = await measure(narrowQueries, runSql, http);
    await warm(broadWarmup);
    const broad = await measure(broadQueries, runSql, http);
    const clientNarrowQueries = clientShapeQueries(
      CLIENT_SEARCHES_PER_SHAPE * CLIENT_SHAPE_COUNT,
      SEED + 5,
      true,
    );
    const clientBroadQueries = clientShapeQueries(
      CLIENT_SEARCHES_PER_SHAPE * CLIENT_SHAPE_COUNT,
      SEED + 6,
      false,
    );
    await warm(clientShapeQueries(8, SEED + 7, true));
    const clientNarrow = await byShape(clientNarrowQueries);
    const clientBroad = await byShape(clientBroadQueries);
    const previews = {
      narrow: await previewVsPaid(searchQueries(PREVIEW_SEARCHES, SEED + 8)),
      broad: await previewVsPaid(searchQueries(Math.ceil(PREVIEW_SEARCHES / 2), SEED + 9, false)),
      clientNarrow: await previewVsPaid(clientShapeQueries(PREVIEW_SEARCHES, SEED + 10, true)),
    };
    const checks = {
      narrow: await check(narrowQueries),
      broad: await check(broadQueries),
      clientNarrow: await check(clientNarrowQueries),
      clientBroad: await check(clientBroadQueries),
    };
    const p95 = (m: Record<string, unknown>) => (m.httpMs as { p95: number }).p95;
    const ratio = (m: Record<string, unknown>) => m.ratioP95 as number;
    return {
      leads: loaded.leads,
      importSeconds: loaded.importSeconds,
      ...(await sizes(db)),
      peakServiceRssMb: peakRssMb(service.pid),
      sharedBuffers: (await sql<{ s: string }>`select current_setting('shared_buffers') as s`.execute(db))
        .rows[0]?.s,
      postgresHugePages: await hugePagesStatus(db),
      goal: "HTTP p95 <= 150 ms for both shapes at 1M (at 5M: narrow <= 150 ms, broad <= 500 ms), <= 1.5x the direct SQL p95",
      withinGoal: {
        narrow: p95(narrow) <= 150 && ratio(narrow) <= 1.5,
        broad: p95(broad) <= (loaded.leads > 2_000_000 ? 500 : 150) && ratio(broad) <= 1.5,
      },
      sideBySide: {
        narrowHttpP50: (narrow.httpMs as { p50: number }).p50,
        broadHttpP50: (broad.httpMs as { p50: number }).p50,
        narrowHttpP95: p95(narrow),
        broadHttpP95: p95(broad),
        narrowSqlP95: (narrow.sqlMs as { p95: number }).p95,
        broadSqlP95: (broad.sqlMs as { p95: number }).p95,
      },
      narrow: {
        searches: narrowQueries.length,
        example: decodeURIComponent(narrowQueries[0] ?? ""),
        ...narrow,
      },
      broad: { searches: broadQueries.length, example: decodeURIComponent(broadQueries[0] ?? ""), ...broad },
      clientShapes: {
        goal: "each shape: HTTP p95 <= 150 ms at 1M (at 5M: narrow <= 150 ms, broad <= 500 ms), <= 1.5x its SQL p95",
        examples: [...clientNarrowQueries.slice(0, 4), clientBroadQueries[0] ?? ""].map((q) =>
          decodeURIComponent(q),
        ),
        narrow: clientNarrow,
        broad: clientBroad,
      },
      previewVsPaid: { goal: "preview p95 <= paid p95 of the same searches", ...previews },
      checks,
    };
  } finally {
    await stopProcess(service);
    await searchDb.destroy();
    await db.destroy();
  }
}
