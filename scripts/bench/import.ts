import { ownDatabase } from "./lib.js";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { createDatabase, migrateToLatest } from "../../src/db/database.js";
import { generateLeads } from "../../src/leads/import/generate.js";
import { writeNdjsonFile } from "../../src/leads/import/ndjson-file.js";

const LINES = Number(process.env.BENCH_IMPORT_LINES ?? 1_000_000);
const CONCURRENCY = process.env.BENCH_IMPORT_CONCURRENCY ?? "3";
const BATCH_SIZE = process.env.BENCH_IMPORT_BATCH_SIZE ?? "1000";
/** Also time a second import of the same file (every line an update). */
const REIMPORT = process.env.BENCH_IMPORT_REIMPORT === "1";
const SEED = 20261122;

/** Peak resident memory (VmHWM) of a running process, in MB; undefined once it is gone. */
function peakRssMb(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
    return kb === undefined ? undefined : Math.round(Number(kb) / 1024);
  } catch {
    return undefined;
  }
}

/** Runs `admin import-leads FILE` as its own process; wall time, peak RSS and what it printed. */
async function timeImport(databaseUrl: string, file: string): Promise<Record<string, unknown>> {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "src/cli/admin.ts",
      "import-leads",
      file,
      "--concurrency",
      CONCURRENCY,
      "--batch-size",
      BATCH_SIZE,
    ],
    {
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  let peak = 0;
  const poll = setInterval(() => {
    peak = Math.max(peak, peakRssMb(child.pid ?? -1) ?? 0);
  }, 100);
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  clearInterval(poll);
  const seconds = (performance.now() - started) / 1000;
  const printed = JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;
  if (code !== 0) throw new Error(`import-leads failed: ${out}`);
  const { errors: _errors, ...counts } = printed;
  return { seconds: Number(seconds.toFixed(1)), peakRssMb: peak, ...counts };
}

/**
 * Generates a 1,000,000-line NDJSON file and times `npm run admin -- import-leads` of it into a
 * database with every migration applied (the search indexes included). Goal: at most 3 minutes,
 * memory that does not grow with the file.
 */
export async function benchImport(databaseUrl: string): Promise<Record<string, unknown>> {
  const target = await ownDatabase(databaseUrl, "import");
  const dir = mkdtempSync(join(tmpdir(), "lead-bench-import-"));
  try {
    const { db } = createDatabase(target.url, 2);
    await migrateToLatest(db);
    const indexes = await sql<{ indexname: string }>`
      select indexname from pg_indexes where tablename = 'leads' order by indexname`.execute(db);

    const file = join(dir, "leads.ndjson");
    const generateStart = performance.now();
    await writeNdjsonFile(file, generateLeads(LINES, SEED));
    const generateSeconds = (performance.now() - generateStart) / 1000;

    const first = await timeImport(target.url, file);
    const second = REIMPORT ? await timeImport(target.url, file) : undefined;
    const size = await sql<{ table: string; indexes: string; rows: number }>`
      select pg_size_pretty(pg_table_size('leads')) as table,
             pg_size_pretty(pg_indexes_size('leads')) as indexes,
             (select count(*) from leads)::int as rows`.execute(db);
    await db.destroy();
    return {
      lines: LINES,
      fileMb: Math.round(statSync(file).size / 1024 / 1024),
      generateSeconds: Number(generateSeconds.toFixed(1)),
      concurrency: Number(CONCURRENCY),
      batchSize: Number(BATCH_SIZE),
      import: first,
      ...(second ? { reimport: second } : {}),
      leadsIndexes: indexes.rows.map((r) => r.indexname),
      leadsTable: size.rows[0],
      goal: "import of 1,000,000 lines in at most 180 s, peak RSS independent of the file size",
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await target.drop();
  }
}
