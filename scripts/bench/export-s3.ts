import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAccountWithKey } from "../../src/accounts/service.js";
import { createDatabase, migrateToLatest } from "../../src/db/database.js";
import { generateLeads } from "../../src/leads/import/generate.js";
import { importLeadRecords } from "../../src/leads/import/importer.js";
import { S3RVER_CREDENTIALS, startLocalS3 } from "../../test/helpers/s3-server.js";
import { ownDatabase, startService, stopProcess } from "./lib.js";

const LEADS = Number(process.env.BENCH_EXPORT_S3_LEADS ?? 100_000);
const SEED = 20261127;
/** Any vowel in the searched columns: every generated lead matches. */
const FILTERS = { positiveKeywords: ["a", "e", "i", "o", "u"] };

/** Resident memory of a process in MB: peak since the last reset (`VmHWM`). */
function peakRssMb(pid: number): number | undefined {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb === undefined ? undefined : Math.round(Number(kb) / 1024);
  } catch {
    return undefined;
  }
}

/** Starts a new peak of the process's resident memory (Linux `clear_refs`). */
function resetPeak(pid: number): void {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
  } catch {
    // not Linux, or not allowed: the peak is the process's whole life
  }
}

/**
 * One CSV export through HTTP (`Prefer: respond-async`, polled every 100 ms), the file read to
 * its last byte as a client saving it would: seconds, bytes and the service's peak RSS.
 */
async function timeCsvExport(base: string, pid: number, apiKey: string, body: Record<string, unknown>) {
  const headers = {
    authorization: `Bearer ${apiKey}`,
    "content-type": "application/json",
    accept: "text/csv",
  };
  resetPeak(pid);
  const started = performance.now();
  let res = await fetch(`${base}/api/v1/leads/export`, {
    method: "POST",
    headers: { ...headers, prefer: "respond-async" },
    body: JSON.stringify(body),
  });
  if (res.status === 202) {
    const { statusUrl } = (await res.json()) as { statusUrl: string };
    for (;;) {
      res = await fetch(`${base}${statusUrl}`, { headers: { ...headers, prefer: "wait=0" } });
      if (res.status !== 202) break;
      await res.arrayBuffer();
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  let bytes = 0;
  for await (const chunk of res.body ?? []) bytes += (chunk as Uint8Array).byteLength;
  if (res.status !== 200) throw new Error(`export answered ${res.status}`);
  return {
    seconds: Number(((performance.now() - started) / 1000).toFixed(2)),
    bytes,
    peakRssMb: peakRssMb(pid),
  };
}

/**
 * `npm run bench -- export-s3`: the same CSV export of LEADS leads (default 100,000;
 * `BENCH_EXPORT_S3_LEADS` for another size) end to end through HTTP, once with the files on local
 * disk and once in a bucket of a local S3 server (s3rver, in this process), each after a small
 * warm-up export, the service (API and worker in one process) started fresh for each. Goal: S3
 * within 1.5x of local disk, service peak RSS < 400 MB during each export.
 */
export async function benchExportS3(databaseUrl: string): Promise<Record<string, unknown>> {
  const target = await ownDatabase(databaseUrl, "export_s3");
  const dir = mkdtempSync(join(tmpdir(), "lead-bench-export-s3-"));
  const { db } = createDatabase(target.url, 4);
  const s3 = await startLocalS3("bench-files");
  try {
    await migrateToLatest(db);
    const importStart = performance.now();
    await importLeadRecords(db, generateLeads(LEADS, SEED));
    const importSeconds = Number(((performance.now() - importStart) / 1000).toFixed(1));
    const account = (label: string) =>
      createAccountWithKey(db, { email: `bench-${label}-${Date.now()}@example.com`, plan: "enterprise" });

    const runs: Record<string, Awaited<ReturnType<typeof timeCsvExport>>> = {};
    const stores: [string, Record<string, string>][] = [
      ["disk", {}],
      [
        "s3",
        {
          S3_BUCKET: s3.bucket,
          S3_ENDPOINT: s3.endpoint,
          S3_REGION: "us-east-1",
          S3_FORCE_PATH_STYLE: "true",
          AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
          AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
          AWS_EC2_METADATA_DISABLED: "true",
        },
      ],
    ];
    for (const [store, env] of stores) {
      // Own accounts per store, so each export pays for every lead.
      const warmUp = await account(`${store}-warm-up`);
      const timed = await account(store);
      const { base, service } = await startService(target.url, join(dir, store), env);
      try {
        await timeCsvExport(base, service.pid ?? -1, warmUp.apiKey, { ...FILTERS, maxResults: 10 });
        runs[store] = await timeCsvExport(base, service.pid ?? -1, timed.apiKey, FILTERS);
      } finally {
        await stopProcess(service);
      }
    }
    const { disk, s3: bucket } = runs as Record<"disk" | "s3", Awaited<ReturnType<typeof timeCsvExport>>>;
    return {
      leads: LEADS,
      importSeconds,
      disk,
      s3: bucket,
      ratio: Number((bucket.seconds / disk.seconds).toFixed(2)),
      goal: "S3 within 1.5x of local disk; service peak RSS < 400 MB during each export",
    };
  } finally {
    await db.destroy();
    await s3.destroy();
    rmSync(dir, { recursive: true, force: true });
    await target.drop();
  }
}
