import { createAccountWithKey } from "../../src/accounts/service.js";
import { createApiKey } from "../../src/auth/service.js";
import { createDatabase, migrateToLatest } from "../../src/db/database.js";
import { STATES } from "../../src/leads/import/generate-data.js";
import { parseSearchFilters } from "../../src/leads/search/filters.js";
import { searchPageQuery } from "../../src/leads/search/query.js";
import { ensureLeads, freePort, startProcess, stopProcess } from "./lib.js";

const LEADS = Number(process.env.BENCH_SEARCH_LEADS ?? 1_000_000);
const SEARCHES = Number(process.env.BENCH_SEARCHES ?? 200);
const WARMUP = 20;
/** Searches of the broad shape (no state), reported beside the main figures. */
const BROAD_SEARCHES = Number(process.env.BENCH_BROAD_SEARCHES ?? 40);
const SEED = 42;
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

/** A small seeded PRNG (mulberry32). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

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
 * `GET /leads` over 1,000,000 generated leads: 200 varied searches (two positive keywords over
 * the four searched columns, one state, one negative keyword, limit 50) through HTTP, against the
 * same search SQL run directly on the database in the same run.
 */
export async function benchSearch(databaseUrl: string): Promise<Record<string, unknown>> {
  const { db, pool } = createDatabase(databaseUrl, 4);
  await migrateToLatest(db);
  const loaded = await ensureLeads(db, LEADS, SEED);
  const { accountId, apiKey } = await createAccountWithKey(db, {
    email: `bench-search-${Date.now()}@example.com`,
    plan: "enterprise",
    permanentCredits: 1_000_000,
  });
  const keys = [apiKey];
  for (let i = 1; i < KEYS; i += 1) keys.push((await createApiKey(db, accountId, `bench ${i}`)).apiKey);

  const warmup = searchQueries(WARMUP, SEED + 1);
  const queries = searchQueries(SEARCHES, SEED);
  // Enough credits that no search is capped: the cap the service passes is the spendable balance.
  const cap = 1_000_000;

  const runSql = async (query: string) => {
    const compiled = searchPageQuery(parseSearchFilters(query, "query"), { accountId, cap }).compile(db);
    const started = performance.now();
    const result = await pool.query(compiled.sql, compiled.parameters as unknown[]);
    const ms = performance.now() - started;
    return { ms, matches: Number((result.rows[0] as { total_matches: number }).total_matches) };
  };

  const port = await freePort();
  const service = await startProcess(
    "src/main.ts",
    { PORT: String(port), HOST: "127.0.0.1", DATABASE_URL: databaseUrl, ROLE: "api", LOG_LEVEL: "warn" },
    `http://127.0.0.1:${port}/api/v1/health`,
  );
  let n = 0;
  const runHttp = async (query: string) => {
    n += 1;
    const started = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/leads?${query}`, {
      headers: { authorization: `Bearer ${keys[n % KEYS]}` },
    });
    const body = (await res.json()) as { data?: { leads: unknown[] } };
    const ms = performance.now() - started;
    if (res.status !== 200) throw new Error(`search answered ${res.status}: ${JSON.stringify(body)}`);
    return { ms, leads: body.data?.leads.length ?? 0 };
  };

  try {
    for (const q of warmup) {
      await runSql(q);
      await runHttp(q);
    }
    const main = await measure(queries, runSql, runHttp);
    // The same shape without the state: tens of thousands of keyword matches to check and count.
    const broad = await measure(searchQueries(BROAD_SEARCHES, SEED + 2, false), runSql, runHttp);
    return {
      leads: loaded.leads,
      importSeconds: loaded.importSeconds,
      searches: queries.length,
      example: decodeURIComponent(queries[0] ?? ""),
      ...main,
      goal: "HTTP p95 <= 150 ms and <= 1.5x the direct SQL p95",
      withoutState: { searches: BROAD_SEARCHES, ...broad },
    };
  } finally {
    await stopProcess(service);
    await db.destroy();
  }
}
