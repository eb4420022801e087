import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import type { Logger } from "pino";
import type { Config } from "../config.js";
import { embeddedUrl, startEmbeddedPostgres } from "./embedded.js";

/** Where the process's database is, and how to stop the embedded server if this process started it. */
export interface DatabaseLocation {
  url: string;
  embedded: boolean;
  stop(): Promise<void>;
}

export const EMBEDDED_DATABASE = "lead_service";

/** The port of an embedded server already running on `dataDir` (another process started it). */
async function runningEmbeddedPort(dataDir: string): Promise<number | undefined> {
  const pidFile = join(dataDir, "pg", "postmaster.pid");
  if (!existsSync(pidFile)) return undefined;
  const [pidLine, , , portLine] = readFileSync(pidFile, "utf8").split("\n");
  const pid = Number(pidLine);
  const port = Number(portLine);
  if (!Number.isInteger(pid) || !Number.isInteger(port)) return undefined;
  try {
    process.kill(pid, 0);
  } catch {
    return undefined; // stale pid file of a server that is gone
  }
  const client = new pg.Client({ connectionString: embeddedUrl(port, "postgres") });
  try {
    await client.connect();
    return port;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * `DATABASE_URL` when set; otherwise the embedded PostgreSQL whose data lives under `DATA_DIR`:
 * the one another process of this service already runs there, or a new one on a free port.
 */
export async function resolveDatabase(config: Config, logger: Logger): Promise<DatabaseLocation> {
  if (config.databaseUrl) return { url: config.databaseUrl, embedded: false, stop: async () => {} };
  const port = await runningEmbeddedPort(config.dataDir);
  if (port !== undefined) {
    logger.info({ dataDir: config.dataDir, port }, "using the embedded PostgreSQL another process runs");
    return { url: embeddedUrl(port, EMBEDDED_DATABASE), embedded: true, stop: async () => {} };
  }
  const server = await startEmbeddedPostgres(config.dataDir, (line) => logger.debug({ postgres: line }));
  await server.createDatabase(EMBEDDED_DATABASE);
  logger.info({ dataDir: config.dataDir }, "embedded PostgreSQL started");
  return { url: server.urlFor(EMBEDDED_DATABASE), embedded: true, stop: () => server.stop() };
}
