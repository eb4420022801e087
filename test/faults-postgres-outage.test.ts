import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import supertest from "supertest";
import { run, type Runner } from "graphile-worker";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app/create-app.js";
import type { AppContext } from "../src/app/context.js";
import { KeyCache } from "../src/auth/key-cache.js";
import { createDatabase } from "../src/db/database.js";
import { NotificationListener } from "../src/db/notifications.js";
import { isDependencyUnavailable } from "../src/http/unavailable.js";
import { JobsRuntime, workerLogger } from "../src/jobs/runtime.js";
import { SchemaTypesCache } from "../src/leads/schema-types.js";
import { createSearchDatabase } from "../src/leads/search/settings.js";
import { Outbound } from "../src/outbound/index.js";
import { RateLimits } from "../src/rate-limit/limiter.js";
import { LocalDiskStorage } from "../src/storage/local-disk.js";
import { replaceExitedWorkers, waitingForDatabase } from "../src/worker/database-outages.js";
import { TcpProxy } from "../scripts/faults/tcp-proxy.js";
import { testConfig } from "./helpers/app.js";
import { createTestDatabase, type TestDatabase } from "./helpers/db.js";
import { buildAccount } from "./helpers/factories.js";
import { TEST_SIGNING_SECRET } from "./helpers/signing-secret.js";

// PostgreSQL going away under an API and a worker (issue 36, scenario 3; the whole scenario with a
// real server stopped for 10 s is `npm run faults -- postgres-outage`). The service's connections
// go through a local TCP proxy that the test cuts (every open connection reset, new ones refused)
// and restores on the same port: while it is cut every request answers 503
// `service_unavailable` with Retry-After, never 500 and never late; afterwards the same app and the
// same worker carry on without a restart.

const silent = pino({ level: "silent" });
let database: TestDatabase;
let proxy: TcpProxy;
let proxiedUrl: string;
let ctx: AppContext;
let notifications: NotificationListener;
let dataDir: string;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  const target = new URL(database.url);
  proxy = new TcpProxy({ host: target.hostname, port: Number(target.port) });
  await proxy.start();
  const url = new URL(database.url);
  url.port = String(proxy.port);
  proxiedUrl = url.toString();
  dataDir = mkdtempSync(join(tmpdir(), "lead-faults-"));
  const config = testConfig({ dataDir });
  const { db, pool } = createDatabase(proxiedUrl, 10);
  // The LISTEN connection goes straight to the database, so the key cache stays warm through the
  // cut and the rate limiter's counters are what meets the outage for a known key.
  notifications = new NotificationListener({ connection: database.url, logger: silent });
  ctx = {
    config,
    db,
    searchDb: createSearchDatabase(proxiedUrl, 2),
    pool,
    logger: silent,
    rateLimits: new RateLimits(pool),
    storage: new LocalDiskStorage(join(dataDir, "files")),
    signingSecret: TEST_SIGNING_SECRET,
    jobs: new JobsRuntime(pool, silent, { defaultWaitMs: 2_000, recheckMs: 500 }, notifications),
    keyCache: new KeyCache({ notifications, logger: silent }),
    schemaTypes: new SchemaTypesCache(db, silent, { notifications }).start(),
    outbound: new Outbound({ allowPrivate: true }),
  };
  await ctx.keyCache?.start();
  await ctx.jobs.ensureQueue();
  closers.push(
    () => ctx.schemaTypes.stop(),
    async () => ctx.outbound.close(),
    () => ctx.jobs.close(),
    async () => ctx.keyCache?.stop(),
    () => notifications.stop(),
    () => ctx.searchDb.destroy(),
    () => db.destroy(),
  );
});

afterAll(async () => {
  await proxy?.restore();
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await database?.destroy();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Polls `probe` until it returns true, or fails after `timeoutMs`. */
async function eventually(probe: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("isDependencyUnavailable", () => {
  it("knows the errors of a database that cannot be reached, and nothing else", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    expect(isDependencyUnavailable(refused)).toBe(true);
    expect(isDependencyUnavailable(new AggregateError([refused]))).toBe(true);
    expect(isDependencyUnavailable(new Error("Connection terminated unexpectedly"))).toBe(true);
    for (const code of ["57P01", "57P03", "08006", "08001", "53300"]) {
      expect(isDependencyUnavailable(Object.assign(new Error("x"), { code })), code).toBe(true);
    }
    expect(isDependencyUnavailable(new Error("wrapped", { cause: refused }))).toBe(true);
    // A wrong query, a constraint or a plain bug stays a 500.
    for (const code of ["42P01", "23505", "22P02", "40001"]) {
      expect(isDependencyUnavailable(Object.assign(new Error("x"), { code })), code).toBe(false);
    }
    expect(isDependencyUnavailable(new TypeError("undefined is not a function"))).toBe(false);
    expect(isDependencyUnavailable("ECONNREFUSED")).toBe(false);
  });
});

describe("the API while PostgreSQL cannot be reached", () => {
  it("answers 503 service_unavailable with Retry-After at once, then serves again", async () => {
    const app = createApp(ctx);
    const request = () => supertest(app);
    const warm = await buildAccount(database.db);
    const cold = await buildAccount(database.db);
    expect((await request().get("/api/v1/me").set(warm.auth)).status).toBe(200);

    await proxy.cut();
    const probes: [string, () => supertest.Test][] = [
      // A key already in the cache: the rate-limit counters meet the outage.
      ["GET /me (cached key)", () => request().get("/api/v1/me").set(warm.auth)],
      // A key never seen: its lookup meets it.
      ["GET /me (key lookup)", () => request().get("/api/v1/me").set(cold.auth)],
      ["GET /leads", () => request().get("/api/v1/leads?limit=1").set(warm.auth)],
      ["GET /integrations", () => request().get("/api/v1/integrations").set(warm.auth)],
      [
        "POST /leads/export",
        () => request().post("/api/v1/leads/export").set(warm.auth).send({ filters: {}, limit: 1 }),
      ],
      ["GET /jobs/{id}", () => request().get("/api/v1/jobs/job_0000000000000000").set(warm.auth)],
      // Operations without a key declare the 503 too.
      [
        "POST /purchase",
        () => request().post("/api/v1/purchase").send({ email: "buyer@example.com", plan: "starter" }),
      ],
      [
        "POST /claim-key",
        () =>
          request()
            .post("/api/v1/claim-key")
            .send({ email: "buyer@example.com", claimToken: "x".repeat(40) }),
      ],
    ];
    for (const [name, probe] of probes) {
      const started = Date.now();
      const res = await probe();
      expect({ name, status: res.status, body: res.body }).toMatchObject({
        status: 503,
        body: { error: "service_unavailable" },
      });
      expect(Number(res.headers["retry-after"]), name).toBeGreaterThan(0);
      expect(Date.now() - started, `${name} answered late`).toBeLessThan(5_000);
    }
    const health = await request().get("/api/v1/health");
    expect(health.status).toBe(503);

    await proxy.restore();
    await eventually(
      async () => (await request().get("/api/v1/me").set(cold.auth)).status === 200,
      10_000,
      "GET /me answering 200 after the restore",
    );
    expect((await request().get("/api/v1/health")).status).toBe(200);
  });
});

describe("the worker while PostgreSQL cannot be reached", () => {
  it("finishes the job that ended during the outage and keeps taking jobs, without a restart", async () => {
    const { db: queueDb, pool: queuePool } = createDatabase(proxiedUrl, 4);
    closers.push(() => queueDb.destroy());
    const finished: string[] = [];
    let releaseFirst: () => void = () => {};
    const firstMayEnd = new Promise<void>((resolve) => (releaseFirst = resolve));
    let firstStarted: () => void = () => {};
    const firstRunning = new Promise<void>((resolve) => (firstStarted = resolve));
    const runner: Runner = await run({
      pgPool: waitingForDatabase(queuePool, silent),
      preset: { plugins: [replaceExitedWorkers(silent)] },
      concurrency: 2,
      noHandleSignals: true,
      pollInterval: 200,
      taskList: {
        faults__probe: async (payload) => {
          const { name } = payload as { name: string };
          if (name === "first") {
            firstStarted();
            await firstMayEnd;
          }
          finished.push(name);
        },
      },
      logger: workerLogger(silent),
    });
    closers.push(() => runner.stop());
    const addJob = (name: string) =>
      sql`select graphile_worker.add_job('faults__probe', ${JSON.stringify({ name })}::json)`.execute(
        database.db,
      );
    const pending = async () =>
      Number(
        (
          await sql<{ n: number }>`select count(*)::int as n from graphile_worker.jobs
            where task_identifier = 'faults__probe'`.execute(database.db)
        ).rows[0]!.n,
      );

    await addJob("first");
    await firstRunning;
    await proxy.cut();
    // The job ends while the database cannot be reached: marking it done must wait, not give up.
    releaseFirst();
    await new Promise((r) => setTimeout(r, 1_500));
    expect(finished).toEqual(["first"]);
    expect(await pending()).toBe(1);
    await proxy.restore();
    await eventually(async () => (await pending()) === 0, 15_000, "the first job marked done");

    // The same runner still takes new jobs.
    await addJob("second");
    await eventually(
      async () => finished.includes("second") && (await pending()) === 0,
      15_000,
      "the second job",
    );
    expect(finished).toEqual(["first", "second"]);
  });
});
