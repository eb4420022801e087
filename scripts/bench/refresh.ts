import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { createAccountWithKey } from "../../src/accounts/service.js";
import { createDatabase, migrateToLatest, type Db } from "../../src/db/database.js";
import { generateLeads } from "../../src/leads/import/generate.js";
import { importLeadRecords } from "../../src/leads/import/importer.js";
import { recordDeliveredLeads } from "../../src/leads/versions.js";
import { ownDatabase, startService, stopProcess } from "./lib.js";

const ENTRIES = Number(process.env.BENCH_REFRESH_ENTRIES ?? 5_000);
const OTHER_LEADS = Number(process.env.BENCH_REFRESH_OTHER_LEADS ?? 45_000);
const SEED = 20261124;
/** Rounds of the three timed requests (each round on accounts of its own); medians are reported. */
const ROUNDS = Number(process.env.BENCH_REFRESH_ROUNDS ?? 3);
/** A word only the benchmark's held leads carry, so a plain export selects exactly them. */
const WORD = "zqrefreshbench";

/** The held leads: generated leads whose company name carries WORD; `changed` gives every other one a new phone. */
function* heldLeads(changed: boolean): Generator<Record<string, unknown>> {
  let i = 0;
  for (const lead of generateLeads(ENTRIES, SEED)) {
    const record = { ...(lead as Record<string, unknown>) };
    record.companyName = `${String(record.companyName)} ${WORD}`;
    if (changed && i % 2 === 0) {
      record.phone = "(512) 555-0000";
      record.lastUpdated = "2026-11-20T00:00:00Z";
    }
    i += 1;
    yield record;
  }
}

/** An account that received every held lead through the API (entries naming the versions delivered). */
async function accountHolding(db: Db, label: string, leadIds: number[]) {
  const account = await createAccountWithKey(db, {
    email: `${label}-${Date.now()}@bench.example`,
    plan: "enterprise",
  });
  await db.transaction().execute((trx) =>
    recordDeliveredLeads(trx, {
      accountId: account.accountId,
      method: "api",
      exportedAt: new Date(),
      leadIds,
    }),
  );
  const rows = await db
    .selectFrom("lead_export_history")
    .select("id")
    .where("account_id", "=", account.accountId)
    .orderBy("id")
    .execute();
  return { ...account, trackingIds: rows.map((r) => r.id) };
}

/** One request answered in full (the service waits up to 75 s before a 202): seconds, status, bytes. */
async function timeRequest(base: string, apiKey: string, path: string, body: unknown) {
  const started = performance.now();
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  let bytes = 0;
  for await (const chunk of res.body ?? []) bytes += (chunk as Uint8Array).byteLength;
  const seconds = (performance.now() - started) / 1000;
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
  return { seconds: Number(seconds.toFixed(2)), bytes };
}

/** The run of median time. */
function median<T extends { seconds: number }>(runs: T[]): T {
  const sorted = [...runs].sort((a, b) => a.seconds - b.seconds);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/**
 * Refresh and refresh-and-export of 5,000 lead export history entries (half of the leads changed
 * by a real import since they were received) as CSV, end to end through HTTP (the service as a
 * child process, API and worker in one), against a plain `POST /leads/export` of the same 5,000
 * leads in the same run (after one small warm-up of each request), in interleaved rounds
 * (BENCH_REFRESH_ROUNDS, default 3; medians compared). Goal: each within 2x of the export.
 */
export async function benchRefresh(databaseUrl: string): Promise<Record<string, unknown>> {
  const target = await ownDatabase(databaseUrl, "refresh");
  const dir = mkdtempSync(join(tmpdir(), "lead-bench-refresh-"));
  const { db } = createDatabase(target.url, 4);
  try {
    await migrateToLatest(db);
    await importLeadRecords(db, generateLeads(OTHER_LEADS, SEED + 1));
    await importLeadRecords(db, heldLeads(false));
    const held = await db
      .selectFrom("leads")
      .select("id")
      .where("company_name", "like", `%${WORD}`)
      .orderBy("id")
      .execute();
    const leadIds = held.map((r) => r.id);
    const warmUp = await accountHolding(db, "warm-up", leadIds.slice(0, 20));
    const exporter = await accountHolding(db, "export", leadIds);
    const refreshers = [];
    const refreshExporters = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      refreshers.push(await accountHolding(db, `refresh-${round}`, leadIds));
      refreshExporters.push(await accountHolding(db, `refresh-and-export-${round}`, leadIds));
    }
    const refresher = refreshers[0]!;
    // Half of the held leads change: a new phone and last-updated date, through the importer.
    await importLeadRecords(db, heldLeads(true));
    const changed = await sql<{ n: number }>`
      select count(*)::int as n from lead_export_history h join leads l on l.id = h.lead_id
      where h.account_id = ${refresher.accountId} and l.version <> h.lead_version`.execute(db);

    const { base, service } = await startService(target.url, dir);
    const exportRuns = [];
    const refreshRuns = [];
    const refreshAndExportRuns = [];
    try {
      // Warm-up (not timed): each request's code paths once, as in any running service.
      await timeRequest(base, warmUp.apiKey, "/api/v1/leads/export", {
        positiveKeywords: [WORD],
        maxResults: 10,
      });
      await timeRequest(base, warmUp.apiKey, "/api/v1/lead-export-history/refresh", {
        trackingIds: warmUp.trackingIds,
      });
      await timeRequest(base, warmUp.apiKey, "/api/v1/lead-export-history/refresh-and-export", {
        trackingIds: warmUp.trackingIds,
      });
      // Interleaved rounds: a moment of load on a shared machine touches all three alike.
      for (let round = 0; round < ROUNDS; round += 1) {
        exportRuns.push(
          await timeRequest(base, exporter.apiKey, "/api/v1/leads/export", {
            positiveKeywords: [WORD],
            maxResults: ENTRIES,
          }),
        );
        const refreshing = refreshers[round]!;
        refreshRuns.push(
          await timeRequest(base, refreshing.apiKey, "/api/v1/lead-export-history/refresh", {
            trackingIds: refreshing.trackingIds,
          }),
        );
        const refreshExporting = refreshExporters[round]!;
        refreshAndExportRuns.push(
          await timeRequest(base, refreshExporting.apiKey, "/api/v1/lead-export-history/refresh-and-export", {
            trackingIds: refreshExporting.trackingIds,
          }),
        );
      }
    } finally {
      await stopProcess(service);
    }
    const exportRun = median(exportRuns);
    const refreshRun = median(refreshRuns);
    const refreshAndExportRun = median(refreshAndExportRuns);
    return {
      rounds: ROUNDS,
      seconds: {
        export: exportRuns.map((r) => r.seconds),
        refresh: refreshRuns.map((r) => r.seconds),
        refreshAndExport: refreshAndExportRuns.map((r) => r.seconds),
      },
      entries: refresher.trackingIds.length,
      changedEntries: changed.rows[0]?.n,
      otherLeads: OTHER_LEADS,
      export: exportRun,
      refresh: refreshRun,
      refreshAndExport: refreshAndExportRun,
      ratio: {
        refresh: Number((refreshRun.seconds / exportRun.seconds).toFixed(2)),
        refreshAndExport: Number((refreshAndExportRun.seconds / exportRun.seconds).toFixed(2)),
      },
      goal: "refresh and refresh-and-export of 5,000 entries (half changed) as CSV within 2x of a plain export of the same leads",
    };
  } finally {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
    await target.drop();
  }
}
