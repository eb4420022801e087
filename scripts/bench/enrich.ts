import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fork } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { createAccountWithKey } from "../../src/accounts/service.js";
import { createDatabase, migrateToLatest, type Db } from "../../src/db/database.js";
import { createEnrichmentRun } from "../../src/enrichments/service.js";
import { DEFAULT_SETTINGS } from "../../src/enrichments/worker/settings.js";
import { ensureLeads, freePort, startProcess, stopProcess } from "./lib.js";

const LEADS = Number(process.env.BENCH_ENRICH_LEADS ?? 1_000_000);
const URLS = Number(process.env.BENCH_ENRICH_URLS ?? 100_000);
const LIVE_SITES = Number(process.env.BENCH_ENRICH_SITES ?? 2_000);
const SEED = 20261123;

/** Resident memory of a process in MB: peak (`VmHWM`) or current (`VmRSS`). */
function rssMb(pid: number, field: "VmHWM" | "VmRSS" = "VmHWM"): number {
  const kb = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Math.round(Number(kb ?? 0) / 1024);
}

/** The bench's worker process, started and ready; `process(runId)` hands it the run. */
interface BenchWorker {
  pid: number;
  process(runId: number): void;
  /** Its exit code once it finished the run. */
  done: Promise<number>;
}

async function startWorker(databaseUrl: string, dataDir: string): Promise<BenchWorker> {
  const child = fork("scripts/bench/enrich-worker.ts", [], {
    execArgv: ["--import", "tsx"],
    env: { ...process.env, DATABASE_URL: databaseUrl, DATA_DIR: dataDir },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const done = new Promise<number>((resolve) => child.once("exit", (code) => resolve(code ?? 1)));
  await new Promise<void>((resolve, reject) => {
    child.once("message", () => resolve());
    void done.then(() => reject(new Error("the bench worker exited before it was ready")));
  });
  return { pid: child.pid ?? -1, process: (runId) => child.send({ runId }), done };
}

/** The largest of the samples so far and the process's resident memory now (0 once it exited). */
function sampleRss(pid: number, peak: number): number {
  try {
    return Math.max(peak, rssMb(pid, "VmHWM"));
  } catch {
    return peak;
  }
}

/**
 * Database matching end to end: `POST /enrichments` through the service (a child process, API
 * role) with 100,000 URLs, half of them hosts of leads in the database (with paths and mixed
 * `www.` / scheme forms), half unknown; the run processed by the worker code in this process (the
 * unknown half is fetched live from a closed local port, so it fails at once instead of waiting on
 * DNS); the run polled through the API every 100 ms until `completed`. Matching lasts from the
 * POST until the poll that sees `scraping`.
 */
async function benchMatching(databaseUrl: string, db: Db) {
  const { rows: hosts } = await sql<{ host: string }>`
    select host from (
      select distinct enrichment_url_host(registered_url) as host from leads where registered_url is not null
    ) h where host is not null order by md5(host) limit ${URLS / 2}`.execute(db);
  const urls: string[] = [];
  hosts.forEach(({ host }, i) => {
    urls.push(
      i % 3 === 0
        ? `https://www.${host}/contact`
        : i % 3 === 1
          ? `http://${host}`
          : `${host}/about-us?ref=list`,
    );
    // Port 9 (discard) on 127.0.0.1 is closed: the live fetch fails at once.
    urls.push(`http://unknown-${i}-${SEED}.example:9/`);
  });
  const account = await createAccountWithKey(db, {
    email: `bench-enrich-${Date.now()}@example.com`,
    plan: "enterprise",
    permanentCredits: URLS,
  });
  const dir = mkdtempSync(join(tmpdir(), "lead-bench-enrich-"));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const service = await startProcess(
    "src/main.ts",
    {
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: databaseUrl,
      DATA_DIR: dir,
      ROLE: "api",
      LOG_LEVEL: "warn",
      PUBLIC_BASE_URL: base,
    },
    `${base}/api/v1/health`,
  );
  const headers = { authorization: `Bearer ${account.apiKey}`, "content-type": "application/json" };
  // A worker already running, as in a deployment.
  const worker = await startWorker(databaseUrl, join(dir, "files"));
  try {
    const started = performance.now();
    const res = await fetch(`${base}/api/v1/enrichments`, {
      method: "POST",
      headers,
      body: JSON.stringify({ urls }),
    });
    if (res.status !== 202) throw new Error(`POST /enrichments answered ${res.status}: ${await res.text()}`);
    const accepted = performance.now();
    const { id } = ((await res.json()) as { data: { id: number } }).data;
    const seen: Record<string, number> = {};
    let peakServiceRss = 0;
    let peakWorkerRss = 0;
    let run: Record<string, unknown> & { status: string } = { status: "queued" };
    let working = true;
    worker.process(id);
    void worker.done.then(() => (working = false));
    while (working || !["completed", "partial", "failed"].includes(run.status)) {
      await new Promise((r) => setTimeout(r, 100));
      const poll = await fetch(`${base}/api/v1/enrichments/${id}`, { headers });
      run = ((await poll.json()) as { data: typeof run }).data;
      seen[run.status] ??= performance.now();
      peakServiceRss = Math.max(peakServiceRss, rssMb(service.pid ?? -1, "VmRSS"));
      peakWorkerRss = sampleRss(worker.pid, peakWorkerRss);
      if (performance.now() - started > 30 * 60 * 1000)
        throw new Error("the run did not finish in 30 minutes");
    }
    if ((await worker.done) !== 0) throw new Error("the bench worker failed");
    const finished = performance.now();
    const order = Object.entries(seen).sort((a, b) => a[1] - b[1]);
    const statusSeconds = Object.fromEntries(
      order.map(([status, at], i) => [
        status,
        Number((((order[i + 1]?.[1] ?? finished) - at) / 1000).toFixed(2)),
      ]),
    );
    const matchingEnd = seen.scraping ?? seen.merging ?? finished;
    const matchingSeconds = (matchingEnd - started) / 1000;
    return {
      urls: urls.length,
      acceptSeconds: Number(((accepted - started) / 1000).toFixed(2)),
      matchingSeconds: Number(matchingSeconds.toFixed(2)),
      matchingUrlsPerSecond: Math.round(urls.length / matchingSeconds),
      totalSeconds: Number(((finished - started) / 1000).toFixed(2)),
      statusSeconds,
      database: run.database,
      live: run.live,
      credits: run.credits,
      servicePeakRssMb: Math.max(peakServiceRss, rssMb(service.pid ?? -1)),
      workerPeakRssMb: peakWorkerRss,
      status: run.status,
    };
  } finally {
    await stopProcess(service);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A local server answering for many small-business sites with realistic pages and latency. */
async function startSites(): Promise<{
  port: number;
  server: Server;
  inFlight: () => number;
  requests: () => number;
  spans: Map<string, [number, number]>;
}> {
  let inFlight = 0;
  let requests = 0;
  /** Per host: first request arrived, last answer sent (a site is in flight between them). */
  const spans = new Map<string, [number, number]>();
  const server = createServer((req, res) => {
    inFlight += 1;
    requests += 1;
    const name = (req.headers.host ?? "").split(":")[0] ?? "";
    const arrived = performance.now();
    if (!spans.has(name)) spans.set(name, [arrived, arrived]);
    const n = Number(/site(\d+)/.exec(name)?.[1] ?? 0);
    const path = req.url ?? "/";
    const page = (
      footer: string,
    ) => `<!doctype html><html><head><meta charset="utf-8"><title>Business ${n} | Austin TX</title>
      <script type="application/ld+json">{"@context":"https://schema.org","@type":"LocalBusiness","name":"Business ${n}"}</script>
      <link rel="stylesheet" href="/s.css"></head><body><header><nav><a href="/">Home</a><a href="/services">Services</a>
      <a href="/contact">Contact us</a><a href="/about">About</a></nav></header><main>${"<section><h2>Our work</h2><p>Honest, local, insured. ".repeat(40)}</p></section></main>
      <footer>${footer}</footer></body></html>`;
    const answer = () => {
      inFlight -= 1;
      const span = spans.get(name);
      if (span) span[1] = performance.now();
      if (path === "/robots.txt")
        res.writeHead(200, { "content-type": "text/plain" }).end("User-agent: *\nDisallow: /admin\n");
      else if (path === "/contact")
        res
          .writeHead(200, { "content-type": "text/html" })
          .end(
            page(
              n % 2 === 0
                ? `<a href="mailto:office@site${n}.test">office</a>`
                : `<p>info [at] site${n} [dot] test</p>`,
            ),
          );
      else if (path === "/")
        res
          .writeHead(200, { "content-type": "text/html" })
          .end(
            page(
              n % 5 === 0
                ? "<p>Family owned.</p>"
                : `<a href="tel:+1512472${String(1000 + (n % 9000)).padStart(4, "0")}">Call</a>`,
            ),
          );
      else res.writeHead(404).end("not found");
    };
    // Latency of a small shared host: 30-150 ms.
    setTimeout(answer, 30 + ((n * 37 + path.length * 11) % 120));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    server,
    inFlight: () => inFlight,
    requests: () => requests,
    spans,
  };
}

/**
 * Live fetching of 2,000 sites of a local server (robots.txt, home page, contact page each) by the
 * worker code in this process, with the default crawl settings (politeness delay, concurrency):
 * sites and requests in flight sampled every 100 ms, and this process's memory.
 */
async function benchLive(databaseUrl: string, db: Db) {
  const sites = await startSites();
  const dir = mkdtempSync(join(tmpdir(), "lead-bench-live-"));
  const account = await createAccountWithKey(db, {
    email: `bench-live-${Date.now()}@example.com`,
    plan: "enterprise",
    permanentCredits: 10_000,
  });
  const urls = Array.from({ length: LIVE_SITES }, (_, i) => `http://site${i}.test:${sites.port}/`);
  const run = await createEnrichmentRun(db, account.accountId, { urls });
  const samples: number[] = [];
  let peakRss = 0;
  const worker = await startWorker(databaseUrl, dir);
  const started = performance.now();
  worker.process(run.id);
  /** Resident memory over the run (VmRSS each second), against the high-water mark. */
  const rssTimeline: number[] = [];
  let tick = 0;
  const sampler = setInterval(() => {
    samples.push(sites.inFlight());
    peakRss = sampleRss(worker.pid, peakRss);
    tick += 1;
    if (tick % 10 === 0) {
      try {
        rssTimeline.push(rssMb(worker.pid, "VmRSS"));
      } catch {
        // The worker has exited.
      }
    }
  }, 100);
  try {
    if ((await worker.done) !== 0) throw new Error("the bench worker failed");
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - started) / 1000;
  const { rows } = await sql<{ status: string; n: string }>`
    select status, count(*) as n from enrichment_urls where run_id = ${run.id} group by status`.execute(db);
  sites.server.close();
  rmSync(dir, { recursive: true, force: true });
  // The steady part: the middle 80% of the run (ramp-up and the last stragglers left out).
  const middle = <T>(list: T[]) => list.slice(Math.floor(list.length * 0.1), Math.ceil(list.length * 0.9));
  const steady = middle(samples).sort((a, b) => a - b);
  const median = steady[Math.floor(steady.length / 2)] ?? 0;
  // Sites in flight (first request to last answer), every 100 ms of the run.
  const spans = [...sites.spans.values()];
  const from = Math.min(...spans.map((s) => s[0]));
  const to = Math.max(...spans.map((s) => s[1]));
  const siteSamples: number[] = [];
  for (let at = from; at <= to; at += 100)
    siteSamples.push(spans.filter(([a, b]) => a <= at && at <= b).length);
  const steadySites = middle(siteSamples).sort((a, b) => a - b);
  return {
    sites: LIVE_SITES,
    seconds: Number(seconds.toFixed(1)),
    sitesPerSecond: Number((LIVE_SITES / seconds).toFixed(1)),
    requests: sites.requests(),
    sitesInFlight: {
      median: steadySites[Math.floor(steadySites.length / 2)] ?? 0,
      p10: steadySites[Math.floor(steadySites.length * 0.1)] ?? 0,
      max: steadySites[steadySites.length - 1] ?? 0,
    },
    requestsInFlight: {
      median,
      p10: steady[Math.floor(steady.length * 0.1)] ?? 0,
      max: steady[steady.length - 1] ?? 0,
    },
    statuses: Object.fromEntries(rows.map((r) => [r.status, Number(r.n)])),
    workerPeakRssMb: peakRss,
    workerRssEverySecondMb: rssTimeline,
    settings: {
      concurrency: DEFAULT_SETTINGS.liveConcurrency,
      politenessDelayMs: DEFAULT_SETTINGS.politenessDelayMs,
    },
  };
}

/**
 * `npm run bench -- enrich`: database matching of 100,000 URLs against 1,000,000 leads (half in
 * the database) end to end through the service, then live fetching of 2,000 local sites. Goals:
 * matching >= 5,000 URLs/s, live fetching >= 20 concurrent fetches, memory < 400 MB throughout.
 */
export async function benchEnrich(databaseUrl: string): Promise<Record<string, unknown>> {
  const { db } = createDatabase(databaseUrl, 8);
  try {
    await migrateToLatest(db);
    const loaded = await ensureLeads(db, LEADS, SEED);
    const matching = await benchMatching(databaseUrl, db);
    const live = await benchLive(databaseUrl, db);
    return { leads: loaded.leads, importSeconds: loaded.importSeconds, matching, live };
  } finally {
    await db.destroy();
  }
}
