import { TEST_SIGNING_SECRET } from "./signing-secret.js";
import type { Express } from "express";
import { pino } from "pino";
import supertest from "supertest";
import type { Runner } from "graphile-worker";
import { afterAll, beforeAll } from "vitest";
import { loadConfig, type Config } from "../../src/config.js";
import { createApp } from "../../src/app/create-app.js";
import type { AppContext } from "../../src/app/context.js";
import { RateLimits } from "../../src/rate-limit/limiter.js";
import { LocalDiskStorage } from "../../src/storage/local-disk.js";
import { JobsRuntime } from "../../src/jobs/runtime.js";
import { createSearchDatabase } from "../../src/leads/search/settings.js";
import { KeyCache } from "../../src/auth/key-cache.js";
import { SchemaTypesCache } from "../../src/leads/schema-types.js";
import { NotificationListener } from "../../src/db/notifications.js";
import { Outbound } from "../../src/outbound/index.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, type TestDatabase } from "./db.js";
import { startJobRunner } from "./jobs-factories.js";

/** The app of one test file, on its own database, with response validation on. */
export interface TestApp {
  app: Express;
  ctx: AppContext;
  database: TestDatabase;
  /** The app's one LISTEN connection (caches of a test's own subscribe to it too). */
  notifications: NotificationListener;
  request: () => supertest.Agent;
}

export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({}),
    validateResponses: true,
    logLevel: "silent",
    outboundAllowPrivate: true,
    signingSecret: TEST_SIGNING_SECRET,
    ...overrides,
  };
}

/** Registers beforeAll / afterAll hooks that build the app and tear it down (no leaked pools). */
export function useTestApp(overrides: Partial<Config> = {}): TestApp {
  const holder = {} as TestApp;
  beforeAll(async () => {
    const database = await createTestDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), "lead-test-data-"));
    const config = testConfig({ dataDir, ...overrides });
    const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
    const silent = pino({ level: "silent" });
    const notifications = new NotificationListener({ connection: database.url, logger: silent });
    const ctx: AppContext = {
      config,
      db: database.db,
      searchDb: createSearchDatabase(database.url, 2),
      pool: database.pool,
      logger,
      rateLimits: new RateLimits(database.pool),
      storage: new LocalDiskStorage(join(config.dataDir, "files")),
      signingSecret: config.signingSecret ?? TEST_SIGNING_SECRET,
      jobs: new JobsRuntime(database.pool, silent, { defaultWaitMs: 10_000, recheckMs: 500 }, notifications),
      keyCache: new KeyCache({ notifications, logger: silent }),
      schemaTypes: new SchemaTypesCache(database.db, logger, { notifications }).start(),
      outbound: new Outbound({ allowPrivate: config.outboundAllowPrivate }),
    };
    await ctx.keyCache?.start();
    holder.ctx = ctx;
    holder.notifications = notifications;
    holder.database = database;
    holder.app = createApp(ctx);
    holder.request = () => supertest.agent(holder.app);
  });
  afterAll(async () => {
    await holder.ctx?.schemaTypes.stop();
    holder.ctx?.outbound.close();
    await holder.ctx?.jobs.close();
    await holder.ctx?.keyCache?.stop();
    await holder.notifications?.stop();
    await holder.ctx?.searchDb.destroy();
    await holder.database?.destroy();
    if (holder.ctx) rmSync(holder.ctx.config.dataDir, { recursive: true, force: true });
  });
  return holder;
}

/**
 * Runs the job tasks (graphile-worker) on the test app's database for the whole test file. A test
 * may stop `runner` and start another in its place (it is stopped after the file).
 */
export function useJobRunner(t: TestApp): { runner: Runner | undefined } {
  const holder: { runner: Runner | undefined } = { runner: undefined };
  beforeAll(async () => {
    holder.runner = await startJobRunner(t.ctx);
  });
  afterAll(async () => {
    await holder.runner?.stop();
  });
  return holder;
}
