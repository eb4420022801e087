import { loadavg } from "node:os";
import { createAccountWithKey } from "../../src/accounts/service.js";
import { createApiKey } from "../../src/auth/service.js";
import { createDatabase, migrateToLatest } from "../../src/db/database.js";
import { freePort, load, startProcess, stopProcess } from "./lib.js";

const KEYS = 200; // 600 requests per minute each: enough for a 10 s run without hitting the limit
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 32;

/**
 * GET /me through the real service (auth, Postgres rate limit, handler; response validation off as
 * in production) against a bare Express handler, same machine, same run.
 */
export async function benchMe(databaseUrl: string): Promise<Record<string, unknown>> {
  const { db } = createDatabase(databaseUrl, 4);
  await migrateToLatest(db);
  const { accountId } = await createAccountWithKey(db, {
    email: `bench-${Date.now()}@example.com`,
    plan: "scale",
  });
  const keys: string[] = [];
  for (let i = 0; i < KEYS; i += 1) keys.push((await createApiKey(db, accountId, `bench ${i}`)).apiKey);
  await db.destroy();

  // Other work on the machine lowers both figures (and the service's more: it shares the CPUs with
  // Postgres); the one-minute load average before each run shows when a result is not trustworthy.
  const loadBefore = { bare: 0, service: 0 };
  const barePort = await freePort();
  const bare = await startProcess(
    "scripts/bench/bare-server.ts",
    { PORT: String(barePort) },
    `http://127.0.0.1:${barePort}/api/v1/me`,
  );
  loadBefore.bare = loadavg()[0] ?? 0;
  const bareResult = await load({
    url: `http://127.0.0.1:${barePort}/api/v1/me`,
    seconds: SECONDS,
    connections: CONNECTIONS,
  });
  await stopProcess(bare);

  const port = await freePort();
  const service = await startProcess(
    "src/main.ts",
    { PORT: String(port), HOST: "127.0.0.1", DATABASE_URL: databaseUrl, ROLE: "api", LOG_LEVEL: "warn" },
    `http://127.0.0.1:${port}/api/v1/health`,
  );
  loadBefore.service = loadavg()[0] ?? 0;
  const serviceResult = await load({
    url: `http://127.0.0.1:${port}/api/v1/me`,
    seconds: SECONDS,
    connections: CONNECTIONS,
    headersFor: (i) => ({ authorization: `Bearer ${keys[i % KEYS]}` }),
  });
  await stopProcess(service);

  return {
    bare: bareResult,
    service: serviceResult,
    ratio: Number((serviceResult.rps / bareResult.rps).toFixed(3)),
    goal: ">= 0.40 of the bare handler's requests per second",
    loadAverageBefore: {
      bare: Number(loadBefore.bare.toFixed(2)),
      service: Number(loadBefore.service.toFixed(2)),
    },
  };
}
