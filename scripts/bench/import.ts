import { ownDatabase } from "./lib.js";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { runMigrations } from "graphile-worker";
import { createAccountWithKey } from "../../src/accounts/service.js";
import { workerLogger } from "../../src/jobs/runtime.js";
import { createLogger } from "../../src/lib/logger.js";
import { createDatabase, migrateToLatest, type Db } from "../../src/db/database.js";
import { generateLeads } from "../../src/leads/import/generate.js";
import { sendQueuedLiveUpdates } from "../../src/leads/import/live-updates.js";
import { queueLiveUpdates } from "../../src/leads/import/live-updates-queue.js";
import { writeNdjsonFile } from "../../src/leads/import/ndjson-file.js";

const LINES = Number(process.env.BENCH_IMPORT_LINES ?? 1_000_000);
const CONCURRENCY = process.env.BENCH_IMPORT_CONCURRENCY ?? "3";
const BATCH_SIZE = process.env.BENCH_IMPORT_BATCH_SIZE ?? "1000";
/** Also time a second import of the same file (every line an update). */
const REIMPORT = process.env.BENCH_IMPORT_REIMPORT === "1";
const SEED = 20261122;
/** Live updates (issue 13): accounts holding imported leads, each subscribed to `lead.updated`. */
const LIVE = process.env.BENCH_IMPORT_LIVE !== "0";
const LIVE_ACCOUNTS = Number(process.env.BENCH_IMPORT_LIVE_ACCOUNTS ?? 20);
const LIVE_LEADS_PER_ACCOUNT = Number(process.env.BENCH_IMPORT_LIVE_LEADS ?? 10_000);

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
    const live = LIVE ? await benchLiveUpdates(db, target.url, dir, file) : undefined;
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
      ...(live ? { liveUpdates: live } : {}),
      leadsIndexes: indexes.rows.map((r) => r.indexname),
      leadsTable: size.rows[0],
      goal: "import of 1,000,000 lines in at most 180 s, peak RSS independent of the file size",
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await target.drop();
  }
}

/** Every generated lead with another primary phone: re-importing it changes every lead. */
function* withNewPhones(lines: number): Generator<Record<string, unknown>> {
  for (const lead of generateLeads(lines, SEED)) {
    yield { ...(lead as Record<string, unknown>), phone: "(512) 555-0000" };
  }
}

/**
 * The cost of live updates: `LIVE_ACCOUNTS` accounts each hold `LIVE_LEADS_PER_ACCOUNT` of the
 * imported leads and subscribe to `lead.updated` on a connected webhook. A re-import that changes
 * every lead is timed with those subscriptions active (one `lead.updated` per held lead, written
 * as one outbox row per account) and, changing every lead back, with them inactive (the lookup of
 * holders still runs and finds nobody). Goal: the first at most 20% slower than the second. The
 * prior-version lookup every batch now makes is timed on its own too (run alone, sequentially: an
 * upper bound of what it adds to the import, where it runs beside the writes).
 */
async function benchLiveUpdates(
  db: Db,
  url: string,
  dir: string,
  originalFile: string,
): Promise<Record<string, unknown>> {
  // The outbox queues the dispatch as a graphile-worker job: its schema, as a worker installs it.
  await runMigrations({ connectionString: url, logger: workerLogger(createLogger("warn")) });
  const changedFile = join(dir, "changed.ndjson");
  await writeNdjsonFile(changedFile, withNewPhones(LINES));
  const accounts: number[] = [];
  for (let i = 0; i < LIVE_ACCOUNTS; i += 1) {
    const { accountId } = await createAccountWithKey(db, { email: `live${i}@bench.example`, plan: "growth" });
    accounts.push(accountId);
    await sql`
      with i as (
        insert into integrations (account_id, provider, display_name, target_url, signing_secret)
        values (${accountId}, 'generic_webhook', 'Bench', 'https://hooks.bench.example/in', 'secret')
        returning id)
      insert into integration_subscriptions (integration_id, account_id, event_type)
      select id, ${accountId}, 'lead.updated' from i`.execute(db);
    // Held leads: every LIVE_ACCOUNTS-th lead, shifted per account, at the version delivered.
    await sql`
      insert into lead_export_history (account_id, lead_id, exported_at, export_method, lead_version, lead_last_updated)
      select ${accountId}, id, now(), 'api', version, last_updated from leads
      where id % ${LIVE_ACCOUNTS} = ${i} order by id limit ${LIVE_LEADS_PER_ACCOUNT}`.execute(db);
  }
  const held = await sql<{ n: number }>`select count(*)::int as n from lead_export_history`.execute(db);

  const withSubscribers = await timeImport(url, changedFile);
  const events = await sql<{ rows: number; leads: number }>`
    select count(*)::int as rows, coalesce(sum(jsonb_array_length(lead_refs -> 'leads')), 0)::int as leads
    from event_outbox where event_type = 'lead.updated'`.execute(db);
  await sql`delete from event_outbox`.execute(db);
  await sql`update integration_subscriptions set is_active = false`.execute(db);
  // The entries name the current versions again, as before the first re-import: both re-imports
  // keep the 200,000 replaced versions the entries name (src/leads/versions.ts), so they differ
  // only in the live updates.
  await sql`update lead_export_history h set lead_version = l.version from leads l where l.id = h.lead_id`.execute(
    db,
  );
  const withoutSubscribers = await timeImport(url, originalFile);

  const ids = await sql<{
    external_id: string;
  }>`select external_id from leads where external_id is not null`.execute(db);
  const all = ids.rows.map((r) => r.external_id);
  const lookupStart = performance.now();
  for (let at = 0; at < all.length; at += Number(BATCH_SIZE)) {
    await sql`select id, version from leads where external_id = any(cast(${all.slice(at, at + Number(BATCH_SIZE))} as text[]))`.execute(
      db,
    );
  }
  const priorLookupSeconds = (performance.now() - lookupStart) / 1000;

  // The live-update step alone, in process, for every lead changed (as after the first re-import):
  // the lookup of holders and one outbox row per account. Less noisy than the difference of two
  // whole imports on a shared machine.
  await sql`update integration_subscriptions set is_active = true`.execute(db);
  const changed = await sql<{
    id: number;
    version: number;
  }>`select id, version from leads order by id`.execute(db);
  // Queued as the import's batches queue them (one row per batch), then sent.
  for (let at = 0; at < changed.rows.length; at += Number(BATCH_SIZE)) {
    const part = changed.rows.slice(at, at + Number(BATCH_SIZE));
    await queueLiveUpdates(db, { ids: part.map((r) => r.id), versions: part.map((r) => r.version) });
  }
  const sendStart = performance.now();
  const sent = await sendQueuedLiveUpdates(db);
  const liveUpdateSeconds = (performance.now() - sendStart) / 1000;
  await sql`delete from event_outbox`.execute(db);

  const slowdown = (Number(withSubscribers.seconds) / Number(withoutSubscribers.seconds) - 1) * 100;
  return {
    accounts: LIVE_ACCOUNTS,
    heldEntries: held.rows[0]?.n,
    reimportWithSubscribers: withSubscribers,
    outbox: events.rows[0],
    reimportWithoutSubscribers: withoutSubscribers,
    slowdownPercent: Number(slowdown.toFixed(1)),
    priorLookupSeconds: Number(priorLookupSeconds.toFixed(1)),
    liveUpdateStep: { seconds: Number(liveUpdateSeconds.toFixed(1)), events: sent },
    /** (prior lookups + the live-update step) / the re-import without subscribers. */
    addedPercentEstimate: Number(
      (((priorLookupSeconds + liveUpdateSeconds) / Number(withoutSubscribers.seconds)) * 100).toFixed(1),
    ),
    goal: "re-import with live updates at most 20% slower than without",
  };
}
