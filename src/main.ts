import type { Server } from "node:http";
import type { Runner } from "graphile-worker";
import { loadConfig } from "./config.js";
import { createCounterPool, createDatabase, migrateToLatest } from "./db/database.js";
import { resolveDatabase } from "./db/resolve.js";
import { createApp } from "./http/app.js";
import { createLogger } from "./lib/logger.js";
import { RateLimits } from "./rate-limit/limiter.js";
import { loadSigningSecret } from "./lib/signing-secret.js";
import { LocalDiskStorage } from "./storage/local-disk.js";
import { join } from "node:path";
import { startWorker } from "./worker/worker.js";

/** `npm start`: migrate, then run the API and/or the worker (ROLE=all|api|worker). */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const location = await resolveDatabase(config, logger);
  const { db, pool } = createDatabase(location.url);
  await migrateToLatest(db);

  let server: Server | undefined;
  let runner: Runner | undefined;
  const counterPool = config.role !== "worker" ? createCounterPool(location.url) : undefined;
  if (counterPool) {
    const app = createApp({
      config,
      db,
      pool,
      logger,
      rateLimits: new RateLimits(counterPool),
      storage: new LocalDiskStorage(join(config.dataDir, "files")),
      signingSecret: await loadSigningSecret(db, config.signingSecret),
    });
    server = app.listen(config.port, config.host);
    await new Promise<void>((resolve, reject) => {
      server!.once("listening", resolve).once("error", reject);
    });
    logger.info({ port: config.port, role: config.role }, "API listening");
  }
  if (config.role !== "api") runner = await startWorker(pool, logger);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    try {
      if (server) {
        const closing = new Promise<void>((resolve) => server!.close(() => resolve()));
        server.closeIdleConnections();
        await closing;
      }
      await runner?.stop();
      await counterPool?.end();
      await db.destroy();
      await location.stop();
      logger.info("stopped");
      process.exit(0);
    } catch (err) {
      logger.error({ err }, "error while shutting down");
      process.exit(1);
    }
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
