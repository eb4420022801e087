import http, { createServer } from "node:http";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type pg from "pg";
import { run, runMigrations } from "graphile-worker";
import { sql } from "kysely";
import Stripe from "stripe";
import { createAccountWithKey } from "../../src/accounts/service.js";
import { createDatabase, migrateToLatest, type Db } from "../../src/db/database.js";
import { emitLeadEvents } from "../../src/events/outbox.js";
import { dispatchAccountEvents } from "../../src/integrations/deliveries/dispatch.js";
import { deliveryHeaders } from "../../src/integrations/deliveries/signature.js";
import { deliveryTaskList } from "../../src/integrations/deliveries/tasks.js";
import { workerLogger } from "../../src/jobs/runtime.js";
import { generateLeads } from "../../src/leads/import/generate.js";
import { importLeadRecords } from "../../src/leads/import/importer.js";
import { createLogger } from "../../src/lib/logger.js";
import { Outbound } from "../../src/outbound/index.js";
import { SEND_CONCURRENCY } from "../../src/integrations/deliveries/deliver.js";
import { DELIVERY_CONCURRENCY } from "../../src/worker/worker.js";
import { freePort, ownDatabase, startProcess, stopProcess } from "./lib.js";

/** Events delivered in the throughput part. */
const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 20_000);
/** Measured searches per account and phase (each returns 1,000 new leads). */
const SEARCHES = Number(process.env.BENCH_WEBHOOK_SEARCHES ?? 20);
const WARMUP_SEARCHES = 3;
/** Deliveries of another account sent before the timed ones, to warm the runner's code. */
const WARMUP_EVENTS = Math.min(5_000, EVENTS);
const LEADS_PER_SEARCH = 1_000;
/** The receiver verifies every n-th delivery with stripe (1: every one). */
const VERIFY_EVERY = Number(process.env.BENCH_WEBHOOK_VERIFY_EVERY ?? 1);
/** Pool of the delivery runner: what `createDatabase` gives `src/main.ts` (shared there with the API). */
const WORKER_POOL_SIZE = Number(process.env.BENCH_WEBHOOK_POOL ?? 20);
/**
 * graphile-worker batching options to try (bench only; the service's worker uses neither):
 * `BENCH_WEBHOOK_LOCAL_QUEUE=17`, `BENCH_WEBHOOK_COMPLETE_BATCH_MS=0`.
 */
const LOCAL_QUEUE = process.env.BENCH_WEBHOOK_LOCAL_QUEUE
  ? Number(process.env.BENCH_WEBHOOK_LOCAL_QUEUE)
  : null;
const COMPLETE_BATCH_MS = process.env.BENCH_WEBHOOK_COMPLETE_BATCH_MS
  ? Number(process.env.BENCH_WEBHOOK_COMPLETE_BATCH_MS)
  : null;
/** Claimer jobs at once (default: the worker's `DELIVERY_CONCURRENCY`; other values to profile). */
const CONCURRENCY = Number(process.env.BENCH_WEBHOOK_CONCURRENCY ?? DELIVERY_CONCURRENCY);
/** Attempts on the wire per claimer (default `SEND_CONCURRENCY`; other values to profile). */
const LANES = process.env.BENCH_WEBHOOK_LANES ? Number(process.env.BENCH_WEBHOOK_LANES) : null;
/**
 * The bare loop runs at each of these POSTs in flight: one claimer's (`SEND_CONCURRENCY`) and
 * the most the runner can have (its claimers' together, within the outbound agent's 64 sockets);
 * the faster is the reference.
 */
const BARE_CONCURRENCIES = [...new Set([SEND_CONCURRENCY, Math.min(64, CONCURRENCY * SEND_CONCURRENCY)])];
/** Profiling only: the delivery runner's commits skip the WAL flush (`synchronous_commit=off`). */
const ASYNC_COMMIT = process.env.BENCH_WEBHOOK_ASYNC_COMMIT === "true";
const SEED = 1212;
const GOAL_PER_SECOND = 500;
const GOAL_RATIO = 0.5;

/** The token in the company names of the leads of block `k`: one search finds exactly that block. */
const blockToken = (k: number) => `zqwbk${k}q`;

// ---------------------------------------------------------------------------------------------
// The receiver: a child process (so its work does not share an event loop with the senders).

interface ReceiverStats {
  requests: number;
  bytes: number;
  verified: number;
  badSignature: number;
  unverifiable: number;
  duplicateIds: number;
  firstError: string | null;
}

const freshStats = (): ReceiverStats => ({
  requests: 0,
  bytes: 0,
  verified: 0,
  badSignature: 0,
  unverifiable: 0,
  duplicateIds: 0,
  firstError: null,
});

/**
 * A local webhook receiver (node:http, keep-alive): answers every POST 200 `ok` at once, then
 * checks its `X-SVC-Signature` with the official `stripe` package (`webhooks.constructEvent`, an
 * independent implementation of the scheme) under the secret registered for its path, and that
 * its event id was not seen before at that path. `/control/...` registers secrets, resets and reports counts.
 */
function runReceiver(port: number): void {
  const stripe = new Stripe("sk_test_x");
  const secrets = new Map<string, string>();
  let stats = freshStats();
  let ids = new Set<string>();
  const server = createServer((req, res) => {
    const path = req.url ?? "/";
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      if (path.startsWith("/control/")) {
        if (path === "/control/secret") {
          const { hookPath, secret } = JSON.parse(raw.toString("utf8")) as {
            hookPath: string;
            secret: string;
          };
          secrets.set(hookPath, secret);
        }
        // A reset answers the counts it ends.
        const answer = JSON.stringify(stats);
        if (path === "/control/reset") {
          stats = freshStats();
          ids = new Set();
        }
        res.writeHead(200, { "content-type": "application/json" });
        res.end(answer);
        return;
      }
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("ok");
      stats.requests += 1;
      stats.bytes += raw.length;
      const secret = secrets.get(path);
      const header = req.headers["x-svc-signature"];
      if (secret === undefined || typeof header !== "string") {
        stats.unverifiable += 1;
        return;
      }
      if (stats.requests % VERIFY_EVERY !== 0) return;
      try {
        const event = stripe.webhooks.constructEvent(raw, header, secret, 300) as unknown as { id: string };
        stats.verified += 1;
        // The same event goes to each subscribed integration with the same id: unique per destination.
        const key = `${path} ${event.id}`;
        if (ids.has(key)) stats.duplicateIds += 1;
        else ids.add(key);
      } catch (err) {
        stats.badSignature += 1;
        stats.firstError ??= err instanceof Error ? err.message : String(err);
      }
    });
  });
  server.listen(port, "127.0.0.1");
  process.on("SIGTERM", () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

if (
  process.env.BENCH_WEBHOOK_RECEIVER === "1" &&
  process.argv[1] !== undefined &&
  import.meta.url === pathToFileURL(resolve(process.argv[1])).href
) {
  runReceiver(Number(process.env.PORT));
}

async function receiverCall(base: string, path: string, body?: unknown): Promise<ReceiverStats> {
  const res = await fetch(`${base}${path}`, {
    method: body === undefined && path === "/control/stats" ? "GET" : "POST",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await res.json()) as ReceiverStats;
}

// ---------------------------------------------------------------------------------------------
// Helpers.

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return Number(sorted[Math.max(0, index)]!.toFixed(1));
}

function summary(ms: number[]): { p50: number; p95: number; mean: number; max: number } {
  const sorted = [...ms].sort((x, y) => x - y);
  return {
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    mean: Number((ms.reduce((s, v) => s + v, 0) / Math.max(1, ms.length)).toFixed(1)),
    max: Number((sorted[sorted.length - 1] ?? 0).toFixed(1)),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (n: number, digits = 0) => Number(n.toFixed(digits));

/** Counts the statements a pool's clients send (graphile-worker's and the tasks' alike). */
function countQueries(pool: pg.Pool): { count: number } {
  const counter = { count: 0 };
  pool.on("connect", (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) => {
      counter.count += 1;
      return query(...args);
    }) as typeof client.query;
  });
  return counter;
}

async function api(
  base: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A webhook integration subscribed to `lead.created` at `receiver + hookPath`; its secret goes to the receiver. */
async function createWebhook(
  apiBase: string,
  key: string,
  receiver: string,
  hookPath: string,
): Promise<number> {
  const res = await api(apiBase, key, "POST", "/integrations/webhook", {
    provider: "generic_webhook",
    displayName: `bench ${hookPath}`,
    targetUrl: `${receiver}${hookPath}`,
    events: ["lead.created"],
  });
  const data = res.body.data as { integration: { id: number }; signingSecret: string } | undefined;
  if (res.status !== 201 || !data) {
    throw new Error(`creating a webhook answered ${res.status}: ${JSON.stringify(res.body)}`);
  }
  await receiverCall(receiver, "/control/secret", { hookPath, secret: data.signingSecret });
  return data.integration.id;
}

async function newAccount(db: Db, label: string): Promise<{ accountId: number; apiKey: string }> {
  return createAccountWithKey(db, {
    email: `bench-webhooks-${label}-${Date.now()}@example.com`,
    plan: "enterprise",
    permanentCredits: 1_000_000,
  });
}

/** Generated leads, block `k` (1,000 leads) carrying `blockToken(k)` in its company names. */
function* blockLeads(blocks: number): Generator<unknown> {
  let n = 0;
  for (const lead of generateLeads(blocks * LEADS_PER_SEARCH, SEED)) {
    const k = Math.floor(n / LEADS_PER_SEARCH);
    n += 1;
    yield { ...lead, companyName: `${lead.companyName ?? "Company"} ${blockToken(k)}` };
  }
}

// ---------------------------------------------------------------------------------------------
// Part 1: deliveries per second against a bare loop of POSTs.

/** N POSTs of signed bodies of `size` bytes, `concurrency` at a time, on a keep-alive agent. */
async function bareLoop(
  url: string,
  count: number,
  concurrency: number,
  secret: string,
  template: string,
): Promise<{
  perSecond: number;
  seconds: number;
  failures: number;
  cpuMsPerRequest?: { sender: number; receiver: number };
}> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 4_000 });
  const target = new URL(url);
  let next = 0;
  let failures = 0;
  const postOne = (i: number) =>
    new Promise<void>((done) => {
      // A fresh id and signature per request, like an attempt (the id keeps the size).
      const body = template.replace("evt_BENCHBARE0000000", `evt_${String(i).padStart(16, "0")}`);
      const headers = deliveryHeaders({ eventType: "lead.created", secret, body, apiKey: null });
      const req = http.request(
        {
          hostname: target.hostname,
          port: target.port,
          path: target.pathname,
          method: "POST",
          agent,
          headers: { ...headers, "Content-Length": String(Buffer.byteLength(body)) },
        },
        (res) => {
          if (res.statusCode !== 200) failures += 1;
          res.resume();
          res.on("end", done);
          res.on("error", done);
        },
      );
      req.on("error", () => {
        failures += 1;
        done();
      });
      req.end(body);
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next;
        next += 1;
        await postOne(i);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return { perSecond: round(count / seconds), seconds: round(seconds, 2), failures };
}

/** `count` real lead versions as `lead.created` events of the account, written as one search would write them (one outbox row). */
async function emitEvents(db: Db, accountId: number, count: number): Promise<void> {
  const { rows: refs } = await sql<{ leadId: number; version: number }>`
    select id as "leadId", version from leads order by id limit ${count}`.execute(db);
  if (refs.length < count) throw new Error(`only ${refs.length} leads for ${count} events`);
  await db
    .transaction()
    .execute((trx) => emitLeadEvents(trx, { accountId, type: "lead.created", source: "api", leads: refs }));
}

/** The delivery runner as src/worker/worker.ts starts it (its delivery tasks), on the given pool. */
async function startRunner(
  pool: pg.Pool,
  db: Db,
  outbound: Outbound,
  logger: ReturnType<typeof createLogger>,
): Promise<Awaited<ReturnType<typeof run>>> {
  return run({
    pgPool: pool,
    concurrency: CONCURRENCY,
    noHandleSignals: true,
    pollInterval: 2_000,
    taskList: deliveryTaskList({ db, outbound, logger, ...(LANES ? { sendConcurrency: LANES } : {}) }),
    logger: workerLogger(logger),
    ...(LOCAL_QUEUE !== null || COMPLETE_BATCH_MS !== null
      ? {
          preset: {
            worker: {
              ...(LOCAL_QUEUE !== null ? { localQueue: { size: LOCAL_QUEUE } } : {}),
              ...(COMPLETE_BATCH_MS !== null ? { completeJobBatchDelay: COMPLETE_BATCH_MS } : {}),
            },
          },
        }
      : {}),
  });
}

/**
 * Waits (at most 90 s) until `count` deliveries of the account succeeded; the time since
 * `started`. It polls every 20 ms whether any delivery still waits, through the partial index of
 * waiting deliveries (a cheap probe: counting the account's rows at every poll would scan the
 * table and take CPU from what is measured), then counts them once.
 */
async function waitDelivered(
  pollDb: Db,
  accountId: number,
  count: number,
  started: number,
): Promise<{ finishedMs: number | null; last: { rows: number; success: number; failed: number } }> {
  const counts = async () => {
    const { rows } = await sql<{ rows: number; success: number; failed: number }>`
      select count(*) as rows,
        count(*) filter (where status = 'success') as success,
        count(*) filter (where status not in ('success', 'pending')) as failed
      from integration_deliveries where account_id = ${accountId}`.execute(pollDb);
    return rows[0]!;
  };
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    const { rows } = await sql<{ waiting: boolean }>`
      select exists (
        select 1 from integration_deliveries
        where next_attempt_at is not null and account_id = ${accountId}) as waiting`.execute(pollDb);
    if (!rows[0]?.waiting) {
      const finishedMs = performance.now() - started;
      const last = await counts();
      return { finishedMs: last.success >= count ? finishedMs : null, last };
    }
    await sleep(20);
  }
  return { finishedMs: null, last: await counts() };
}

async function deliveriesPerSecond(
  databaseUrl: string,
  db: Db,
  apiBase: string,
  receiver: string,
  receiverPid: number | undefined,
): Promise<Record<string, unknown>> {
  const { accountId, apiKey } = await newAccount(db, "speed");
  const hookPath = "/hook/speed";
  const integrationId = await createWebhook(apiBase, apiKey, receiver, hookPath);
  const secret = (
    await db
      .selectFrom("integrations")
      .select("signing_secret")
      .where("id", "=", integrationId)
      .executeTakeFirstOrThrow()
  ).signing_secret;

  // The delivery runner as src/worker/worker.ts starts it, on a pool of its own.
  const logger = createLogger("warn");
  const workerUrl = new URL(databaseUrl);
  if (ASYNC_COMMIT) workerUrl.searchParams.set("options", "-c synchronous_commit=off");
  const { db: workerDb, pool: workerPool } = createDatabase(workerUrl.toString(), WORKER_POOL_SIZE);
  const queries = countQueries(workerPool);
  const { db: pollDb } = createDatabase(databaseUrl, 2);
  const outbound = new Outbound({ allowPrivate: true });

  // Warm the runner's code (the JIT of its sending, signing and recording) with deliveries of
  // another account before anything is timed, as the bare loop is warmed below.
  const warm = await newAccount(db, "warmup");
  const warmHook = await createWebhook(apiBase, warm.apiKey, receiver, "/hook/warmup");
  await emitEvents(db, warm.accountId, WARMUP_EVENTS);
  await dispatchAccountEvents(workerDb, warm.accountId);
  const warmRunner = await startRunner(workerPool, workerDb, outbound, logger);
  const warmed = await waitDelivered(pollDb, warm.accountId, WARMUP_EVENTS, performance.now());
  await warmRunner.stop();
  if (warmed.finishedMs === null)
    throw new Error(`warm-up deliveries did not finish: ${JSON.stringify(warmed.last)}`);
  await sql`delete from integrations where id = ${warmHook}`.execute(db);

  // EVENTS real lead versions, written as one search would write them (one outbox row).
  await emitEvents(db, accountId, EVENTS);

  // Warm the receiver (and the JIT of both sides' HTTP code) before anything is timed.
  const template = JSON.stringify({
    id: "evt_BENCHBARE0000000",
    type: "lead.created",
    occurredAt: new Date().toISOString(),
    userId: accountId,
    integrationId,
    provider: "generic_webhook",
    data: {},
  });
  await bareLoop(`${receiver}${hookPath}`, 2_000, SEND_CONCURRENCY, secret, template);
  await receiverCall(receiver, "/control/reset");

  const loadBefore = loadavg()[0] ?? 0;
  const postmaster = await postmasterPid(pollDb);

  // The dispatch first, on its own (what the runner's `events__dispatch` job does): the outbox
  // row becomes EVENTS due deliveries, each with its lead summary.
  const dispatchCpuBefore = { worker: process.cpuUsage(), postgres: cpuMs({ parent: postmaster }) };
  const dispatchStarted = performance.now();
  await dispatchAccountEvents(workerDb, accountId);
  const dispatchMs = performance.now() - dispatchStarted;
  const dispatchWorkerCpu = process.cpuUsage(dispatchCpuBefore.worker);
  const dispatchCpu = {
    worker: (dispatchWorkerCpu.user + dispatchWorkerCpu.system) / 1000,
    postgres: cpuDelta(dispatchCpuBefore.postgres, cpuMs({ parent: postmaster })),
  };

  const queriesBefore = queries.count;
  const commitsBefore = await commits(pollDb);
  const cpuBefore = {
    worker: process.cpuUsage(),
    postgres: cpuMs({ parent: postmaster }),
    receiver: cpuMs({ pids: [receiverPid] }),
  };
  const started = performance.now();
  const runner = await startRunner(workerPool, workerDb, outbound, logger);
  const { finishedMs, last } = await waitDelivered(pollDb, accountId, EVENTS, started);
  const totalQueries = queries.count - queriesBefore;
  const workerCpu = process.cpuUsage(cpuBefore.worker);
  const cpu = {
    worker: (workerCpu.user + workerCpu.system) / 1000,
    postgres: cpuDelta(cpuBefore.postgres, cpuMs({ parent: postmaster })),
    receiver: cpuDelta(cpuBefore.receiver, cpuMs({ pids: [receiverPid] })),
  };
  const totalCommits = (await commits(pollDb)) - commitsBefore;
  await runner.stop();
  outbound.close();
  await workerDb.destroy();
  await pollDb.destroy();
  const received = await receiverCall(receiver, "/control/reset");
  if (finishedMs === null) {
    throw new Error(
      `deliveries did not finish: ${JSON.stringify(last)}; receiver ${JSON.stringify(received)}`,
    );
  }

  // The bare loop: the same number of POSTs of signed bodies of the same size, at the same
  // concurrency; a run takes well under a second, so the median of three is reported.
  const bodySize = Math.round(received.bytes / Math.max(1, received.requests));
  const bareTemplate = template.replace(
    '"data":{}',
    `"data":{"pad":"${"x".repeat(Math.max(0, bodySize - template.length - 8))}"}`,
  );
  const bareByConcurrency: {
    concurrency: number;
    median: Awaited<ReturnType<typeof bareLoop>>;
    runs: number[];
  }[] = [];
  let bareReceived = freshStats();
  for (const concurrency of BARE_CONCURRENCIES) {
    const runs: Awaited<ReturnType<typeof bareLoop>>[] = [];
    for (let i = 0; i < 3; i += 1) {
      const bareCpuBefore = { sender: process.cpuUsage(), receiver: cpuMs({ pids: [receiverPid] }) };
      runs.push(await bareLoop(`${receiver}${hookPath}`, EVENTS, concurrency, secret, bareTemplate));
      const senderCpu = process.cpuUsage(bareCpuBefore.sender);
      runs[runs.length - 1]!.cpuMsPerRequest = {
        sender: round((senderCpu.user + senderCpu.system) / 1000 / EVENTS, 3),
        receiver: round(cpuDelta(bareCpuBefore.receiver, cpuMs({ pids: [receiverPid] })) / EVENTS, 3),
      };
      bareReceived = await receiverCall(receiver, "/control/reset");
      if (bareReceived.requests !== EVENTS || bareReceived.verified !== EVENTS / VERIFY_EVERY) {
        throw new Error(`bare loop: receiver counted ${JSON.stringify(bareReceived)}`);
      }
    }
    const median = [...runs].sort((x, y) => x.perSecond - y.perSecond)[1]!;
    bareByConcurrency.push({ concurrency, median, runs: runs.map((r) => r.perSecond) });
  }
  const fastest = [...bareByConcurrency].sort((x, y) => y.median.perSecond - x.median.perSecond)[0]!;
  const bare = fastest.median;

  const perSecond = round(EVENTS / (finishedMs / 1000));
  const ratio = round(perSecond / bare.perSecond, 3);
  return {
    events: EVENTS,
    claimers: CONCURRENCY,
    sendConcurrency: SEND_CONCURRENCY,
    workerPoolSize: WORKER_POOL_SIZE,
    graphileOptions: { localQueue: LOCAL_QUEUE, completeJobBatchDelay: COMPLETE_BATCH_MS },
    ...(ASYNC_COMMIT ? { profiling: "synchronous_commit=off on the runner's pool" } : {}),
    loadAverageBefore: round(loadBefore, 2),
    averageBodyBytes: bodySize,
    dispatch: {
      seconds: round(dispatchMs / 1000, 2),
      eventsPerSecond: round(EVENTS / (dispatchMs / 1000)),
      cpuMsPerEvent: {
        worker: round(dispatchCpu.worker / EVENTS, 3),
        postgres: round(dispatchCpu.postgres / EVENTS, 3),
      },
    },
    deliveries: {
      perSecond,
      seconds: round(finishedMs / 1000, 2),
      // Dispatch and deliveries together, one after the other.
      withDispatchPerSecond: round(EVENTS / ((dispatchMs + finishedMs) / 1000)),
      // Statements the runner's pool sent and transactions the server committed, per delivery
      // (a read-only statement outside a transaction commits too).
      queriesPerDelivery: round(totalQueries / EVENTS, 2),
      commitsPerDelivery: round(totalCommits / EVENTS, 2),
      notSuccess: last.failed,
      // CPU time per delivery of the runner's process (with the 50 ms poll),
      // of every PostgreSQL process, and of the receiver; the machine has `cpus` of them.
      cpuMsPerDelivery: {
        worker: round(cpu.worker / EVENTS, 3),
        postgres: round(cpu.postgres / EVENTS, 3),
        receiver: round(cpu.receiver / EVENTS, 3),
      },
      cpus: availableParallelism(),
    },
    receiver: {
      requests: received.requests,
      verifiedWithStripe: received.verified,
      badSignature: received.badSignature,
      unverifiable: received.unverifiable,
      duplicateEventIds: received.duplicateIds,
      firstError: received.firstError,
    },
    bare: {
      ...bare,
      concurrency: fastest.concurrency,
      byConcurrency: bareByConcurrency.map((b) => ({ concurrency: b.concurrency, runs: b.runs })),
      averageBodyBytes: Math.round(bareReceived.bytes / Math.max(1, bareReceived.requests)),
      verifiedWithStripe: bareReceived.verified,
      duplicateEventIds: bareReceived.duplicateIds,
    },
    ratio,
    goal: `>= ${GOAL_PER_SECOND}/s and >= ${GOAL_RATIO} of the bare loop`,
    goalMet: { perSecond: perSecond >= GOAL_PER_SECOND, ratio: ratio >= GOAL_RATIO },
  };
}

/** The postmaster's pid (the parent of this connection's backend). */
async function postmasterPid(db: Db): Promise<number | undefined> {
  const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db);
  const stat = procStat(rows[0]?.pid);
  return stat ? Number(stat[1]) : undefined;
}

/** The fields after the command of `/proc/<pid>/stat` (Linux; undefined elsewhere or when gone). */
function procStat(pid: number | undefined): string[] | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** CPU time (user + system, ms) used so far by each of the given processes, or by every child of `parent`. */
function cpuMs(
  select: { pids: (number | undefined)[] } | { parent: number | undefined },
): Map<number, number> {
  let pids: (number | undefined)[] = [];
  if ("pids" in select) pids = select.pids;
  else if (select.parent !== undefined) {
    try {
      pids = readdirSync("/proc")
        .filter((name) => /^\d+$/.test(name))
        .map(Number)
        .filter((pid) => procStat(pid)?.[1] === String(select.parent));
    } catch {
      pids = [];
    }
  }
  const out = new Map<number, number>();
  for (const pid of pids) {
    const stat = procStat(pid);
    // utime + stime, in USER_HZ (100 a second on Linux).
    if (pid !== undefined && stat) out.set(pid, (Number(stat[11]) + Number(stat[12])) * 10);
  }
  return out;
}

/** CPU ms used between two `cpuMs` readings (processes started in between count whole). */
function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let ms = 0;
  for (const [pid, value] of after) ms += value - (before.get(pid) ?? 0);
  return ms;
}

/** Transactions committed in the whole server so far (the bench database is the only busy one). */
async function commits(db: Db): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select xact_commit as n from pg_stat_database where datname = current_database()`.execute(db);
  // Statistics are flushed at transaction end, at most once a second: close enough for a ratio.
  return Number(rows[0]?.n ?? 0);
}

// ---------------------------------------------------------------------------------------------
// Part 2: a search of 1,000 new leads with and without 3 subscribed integrations.

async function searchLatency(
  db: Db,
  apiBase: string,
  receiver: string,
  label: string,
): Promise<Record<string, unknown>> {
  const loadBefore = loadavg()[0] ?? 0;
  const withHooks = await newAccount(db, `${label}-with`);
  const without = await newAccount(db, `${label}-without`);
  for (let i = 1; i <= 3; i += 1)
    await createWebhook(apiBase, withHooks.apiKey, receiver, `/hook/${label}${i}`);

  const search = async (key: string, block: number) => {
    const query = new URLSearchParams({
      positiveKeywords: blockToken(block),
      limit: String(LEADS_PER_SEARCH),
    });
    const started = performance.now();
    const res = await fetch(`${apiBase}/api/v1/leads?${query.toString()}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const body = (await res.json()) as { data?: { leads: unknown[]; creditsUsed: number } };
    const ms = performance.now() - started;
    if (res.status !== 200 || !body.data)
      throw new Error(`search answered ${res.status}: ${JSON.stringify(body)}`);
    if (body.data.leads.length !== LEADS_PER_SEARCH || body.data.creditsUsed !== LEADS_PER_SEARCH) {
      throw new Error(`search returned ${body.data.leads.length} leads, ${body.data.creditsUsed} new`);
    }
    return ms;
  };

  const withMs: number[] = [];
  const withoutMs: number[] = [];
  for (let block = 0; block < WARMUP_SEARCHES + SEARCHES; block += 1) {
    // Alternating which account goes first, so both see the same load and caches.
    const first = block % 2 === 0 ? withHooks : without;
    const second = first === withHooks ? without : withHooks;
    const a = await search(first.apiKey, block);
    const b = await search(second.apiKey, block);
    if (block < WARMUP_SEARCHES) continue;
    (first === withHooks ? withMs : withoutMs).push(a);
    (second === withHooks ? withMs : withoutMs).push(b);
  }
  const { rows } = await sql<{ account_id: number; n: number }>`
    select account_id, count(*) as n from event_outbox
    where account_id in (${withHooks.accountId}, ${without.accountId}) group by account_id`.execute(db);
  const outboxRows = (accountId: number) => rows.find((r) => r.account_id === accountId)?.n ?? 0;
  const withSummary = summary(withMs);
  const withoutSummary = summary(withoutMs);
  return {
    searches: SEARCHES,
    leadsPerSearch: LEADS_PER_SEARCH,
    loadAverageBefore: round(loadBefore, 2),
    with3IntegrationsMs: withSummary,
    withoutIntegrationsMs: withoutSummary,
    ratioP50: round(withSummary.p50 / Math.max(0.1, withoutSummary.p50), 2),
    ratioP95: round(withSummary.p95 / Math.max(0.1, withoutSummary.p95), 2),
    outboxRowsLeft: { with: outboxRows(withHooks.accountId), without: outboxRows(without.accountId) },
    accounts: { with: withHooks.accountId, without: without.accountId },
  };
}

/** Drops the queued events of an account (its outbox rows and pending dispatch job). */
async function dropQueuedEvents(db: Db, accountId: number): Promise<void> {
  await sql`delete from event_outbox where account_id = ${accountId}`.execute(db);
  await sql`select graphile_worker.remove_job(${`events__dispatch:${accountId}`}::text)`.execute(db);
}

// ---------------------------------------------------------------------------------------------

/**
 * `npm run bench -- webhooks` (issue 12, "Speed"): signed, recorded deliveries per second to a
 * local receiver that verifies each with stripe, against a bare loop of signed POSTs from Node in
 * the same run; and a search returning 1,000 new leads to an account with 3 subscribed
 * integrations against one without, first with no worker running (the request's own cost), then
 * with the worker of a `ROLE=all` process delivering at the same time.
 *
 * Knobs (environment): BENCH_WEBHOOK_EVENTS (20,000), BENCH_WEBHOOK_SEARCHES (20; 0 skips the
 * searches), BENCH_WEBHOOK_VERIFY_EVERY (1), and, to profile the runner, BENCH_WEBHOOK_CONCURRENCY,
 * BENCH_WEBHOOK_LANES, BENCH_WEBHOOK_POOL, BENCH_WEBHOOK_LOCAL_QUEUE, BENCH_WEBHOOK_COMPLETE_BATCH_MS and
 * BENCH_WEBHOOK_ASYNC_COMMIT=true.
 */
export async function benchWebhooks(databaseUrl: string): Promise<Record<string, unknown>> {
  const own = await ownDatabase(databaseUrl, "webhooks");
  const { db, pool } = createDatabase(own.url, 4);
  const dataDir = mkdtempSync(join(tmpdir(), "lead-bench-webhooks-"));
  const children: Awaited<ReturnType<typeof startProcess>>[] = [];
  try {
    await migrateToLatest(db);
    await runMigrations({ pgPool: pool, logger: workerLogger(createLogger("warn")) });
    const blocks = Math.max(WARMUP_SEARCHES + SEARCHES, Math.ceil(EVENTS / LEADS_PER_SEARCH));
    const importStarted = performance.now();
    await importLeadRecords(db, blockLeads(blocks));
    await sql`vacuum analyze leads`.execute(db);
    const importSeconds = round((performance.now() - importStarted) / 1000, 1);

    const receiverPort = await freePort();
    const receiver = `http://127.0.0.1:${receiverPort}`;
    children.push(
      await startProcess(
        "scripts/bench/webhooks.ts",
        { PORT: String(receiverPort), BENCH_WEBHOOK_RECEIVER: "1" },
        `${receiver}/control/stats`,
      ),
    );
    const apiEnv = (role: string, port: number) => ({
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: own.url,
      ROLE: role,
      LOG_LEVEL: "warn",
      OUTBOUND_ALLOW_PRIVATE: "true",
      DATA_DIR: dataDir,
    });

    // An API process without a worker: the benchmark runs the delivery runner itself.
    const apiPort = await freePort();
    const apiBase = `http://127.0.0.1:${apiPort}`;
    const apiProcess = await startProcess("src/main.ts", apiEnv("api", apiPort), `${apiBase}/api/v1/health`);
    children.push(apiProcess);

    const speed = await deliveriesPerSecond(own.url, db, apiBase, receiver, children[0]?.pid);
    if (SEARCHES <= 0) return { leads: blocks * LEADS_PER_SEARCH, importSeconds, deliveriesPerSecond: speed };
    const noWorker = await searchLatency(db, apiBase, receiver, "a");
    await stopProcess(apiProcess);
    children.pop();
    for (const accountId of Object.values(noWorker.accounts as Record<string, number>)) {
      await dropQueuedEvents(db, accountId);
    }

    // `npm start`'s default: API and worker in one process, delivering while the searches run.
    const allPort = await freePort();
    const allBase = `http://127.0.0.1:${allPort}`;
    children.push(await startProcess("src/main.ts", apiEnv("all", allPort), `${allBase}/api/v1/health`));
    const withWorker = await searchLatency(db, allBase, receiver, "b");
    const delivered = await receiverCall(receiver, "/control/stats");

    return {
      leads: blocks * LEADS_PER_SEARCH,
      importSeconds,
      deliveriesPerSecond: speed,
      search: {
        goal: "p50 / p95 with 3 integrations no slower than without",
        workerOff: {
          note: "API only (ROLE=api): the outbox rows wait; only the request's own cost",
          ...noWorker,
        },
        workerOn: {
          note: "ROLE=all: the same process's worker dispatches and delivers while the searches run",
          ...withWorker,
          deliveredDuringSearches: delivered.requests,
          verifiedWithStripe: delivered.verified,
          badSignature: delivered.badSignature,
          duplicateEventIds: delivered.duplicateIds,
        },
      },
    };
  } finally {
    for (const child of children.reverse()) await stopProcess(child);
    await db.destroy();
    await own.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
