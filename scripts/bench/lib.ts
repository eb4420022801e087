import pg from "pg";
import { sql } from "kysely";
import type { Db } from "../../src/db/database.js";
import { generateLeads } from "../../src/leads/import/generate.js";
import { importLeadRecords } from "../../src/leads/import/importer.js";
import { orderSearchTableByState } from "../../src/db/search-table-order.js";
import autocannon from "autocannon";
import { execFileSync, fork, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres, freePort, type EmbeddedServer } from "../../src/db/embedded.js";

/** A database for a benchmark: DATABASE_URL when set, else a throw-away embedded server. */
export async function benchDatabase(): Promise<{ url: string; stop(): Promise<void> }> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, stop: async () => {} };
  const dir = mkdtempSync(join(tmpdir(), "lead-bench-"));
  const server: EmbeddedServer = await startEmbeddedPostgres(dir, () => {});
  await server.createDatabase("bench");
  return {
    url: server.urlFor("bench"),
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Whether the PostgreSQL server runs its shared memory on huge pages (`on` / `off`; PostgreSQL
 * 17+). On this project's VM it changes the figures of database-bound benchmarks by a third or
 * more (docs/performance.md), so each run records it beside its figures.
 */
export async function hugePagesStatus(db: Db): Promise<string | undefined> {
  const { rows } = await sql<{ s: string }>`select current_setting('huge_pages_status', true) as s`.execute(
    db,
  );
  return rows[0]?.s;
}

/** The service's entry point as `npm start` runs it: built once per bench run (`npm run build`). */
const SERVICE_ENTRY = "src/main.ts";
let serviceBuilt = false;

/**
 * How to run an entry point: the service as `npm start` does (the JavaScript of `npm run build`,
 * without tsx, whose loader keeps about 100 MB more resident: docs/performance.md), any other
 * TypeScript entry point through tsx.
 */
function runnable(entry: string): { file: string; execArgv: string[] } {
  if (entry !== SERVICE_ENTRY) return { file: entry, execArgv: ["--import", "tsx"] };
  if (!serviceBuilt) {
    execFileSync("npm", ["run", "--silent", "build"], { stdio: "inherit" });
    serviceBuilt = true;
  }
  return { file: "dist/main.js", execArgv: [] };
}

/** Starts an entry point as a child process (see runnable) and waits until it listens. */
export async function startProcess(
  entry: string,
  env: Record<string, string>,
  readyUrl: string,
): Promise<ChildProcess> {
  const { file, execArgv } = runnable(entry);
  const child = fork(file, [], {
    execArgv: [...execArgv, ...(process.env.BENCH_CHILD_ARGS?.split(" ").filter(Boolean) ?? [])],
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(readyUrl);
      if (res.status < 500) return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill("SIGKILL");
  throw new Error(`${entry} did not start`);
}

/**
 * `npm start` as a child process (ROLE=all: API and worker) on a database, listening on a free
 * local port; `env` adds to or overrides its settings.
 */
export async function startService(
  databaseUrl: string,
  dataDir: string,
  env: Record<string, string> = {},
): Promise<{ base: string; service: ChildProcess }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const service = await startProcess(
    "src/main.ts",
    {
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      ROLE: "all",
      LOG_LEVEL: "warn",
      PUBLIC_BASE_URL: base,
      ...env,
    },
    `${base}/api/v1/health`,
  );
  return { base, service };
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  if (child.exitCode === null) child.kill("SIGKILL");
}

/** Runs autocannon against one URL; headers can change per request (to spread over keys). */
export async function load(options: {
  url: string;
  seconds: number;
  connections: number;
  headersFor?: (i: number) => Record<string, string>;
}): Promise<{ rps: number; p50: number; p99: number; non2xx: number; errors: number }> {
  let i = 0;
  const result = await autocannon({
    url: options.url,
    duration: options.seconds,
    connections: options.connections,
    requests: [
      {
        setupRequest: (req) => {
          i += 1;
          return { ...req, headers: { ...req.headers, ...(options.headersFor?.(i) ?? {}) } };
        },
      },
    ],
  });
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

export { freePort };

/**
 * A database of its own on the bench server for one benchmark (so its leads do not end up in
 * another benchmark's data), dropped afterwards; the given one if it cannot be created.
 */
export async function ownDatabase(
  databaseUrl: string,
  label: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const url = new URL(databaseUrl);
  const name = `lead_bench_${label}_${process.pid}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    await admin.query(`create database "${name}"`);
  } catch {
    await admin.end();
    return { url: databaseUrl, drop: async () => {} };
  }
  await admin.end();
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const cleanup = new pg.Client({ connectionString: databaseUrl });
      await cleanup.connect();
      await cleanup.query(`drop database if exists "${name}" with (force)`);
      await cleanup.end();
    },
  };
}

/**
 * Loads `count` generated leads (seed `seed`) unless the table already holds that many (an
 * existing load is reused), then vacuums, analyzes and checkpoints as an operator would after a bulk
 * load; the import time includes them.
 */
export async function ensureLeads(
  db: Db,
  count: number,
  seed: number,
): Promise<{ leads: number; importSeconds: number | null }> {
  const stored = async () =>
    Number(
      (
        await db
          .selectFrom("leads")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const before = await stored();
  if (before >= count) return { leads: before, importSeconds: null };
  const started = performance.now();
  await importLeadRecords(db, generateLeads(count, seed));
  // What the operator does after a large import (docs/search.md, "`lead_search` in state order").
  await db.transaction().execute((trx) => orderSearchTableByState(trx));
  // `lead_search` too: the triggers filled it in the same load, and the searches read it.
  await sql`vacuum analyze leads, lead_search`.execute(db);
  // The load written out as part of it: otherwise the first searches evict its dirty pages from
  // the shared buffers and write them themselves (a broad p95 at 5M 20% higher than in a later
  // run). Needs superuser or pg_checkpoint; without them the searches share the machine with it.
  await sql`checkpoint`.execute(db).catch(() => undefined);
  return { leads: await stored(), importSeconds: Number(((performance.now() - started) / 1000).toFixed(1)) };
}
