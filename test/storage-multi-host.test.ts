import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./helpers/db.js";
import { buildWordLeads, csvRecords } from "./helpers/export-job-factories.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLead, uniqueWord } from "./helpers/leads-factories.js";
import { listenPort } from "./helpers/ports.js";
import { startService, stopWith, waitForUrl } from "./helpers/processes.js";
import { S3RVER_CREDENTIALS, startLocalS3, type LocalS3 } from "./helpers/s3-server.js";
import { TEST_SIGNING_SECRET } from "./helpers/signing-secret.js";

// Several hosts: two API processes (`npm start` with ROLE=api) and one worker process
// (ROLE=worker), each with its own DATA_DIR, sharing one PostgreSQL and one bucket (a local S3
// server) and nothing else. A file written by one process is served by any other.

interface Host {
  name: string;
  child: ChildProcess;
  dataDir: string;
  base: string;
  stderr: string;
}

let database: TestDatabase;
let s3: LocalS3;
const hosts: Host[] = [];
let apiA: Host;
let apiB: Host;

async function startHost(name: string, role: "api" | "worker"): Promise<Host> {
  const dataDir = mkdtempSync(join(tmpdir(), `lead-host-${name}-`));
  const port = await listenPort();
  const child = startService("src/main.ts", {
    ROLE: role,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: "127.0.0.1",
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: database.url,
    SIGNING_SECRET: TEST_SIGNING_SECRET,
    VALIDATE_RESPONSES: "true",
    OUTBOUND_ALLOW_PRIVATE: "true",
    S3_BUCKET: s3.bucket,
    S3_ENDPOINT: s3.endpoint,
    S3_REGION: "us-east-1",
    S3_FORCE_PATH_STYLE: "true",
    // The SDK's default credential chain, as on a real host.
    AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    AWS_EC2_METADATA_DISABLED: "true",
  });
  const host: Host = { name, child, dataDir, base: `http://127.0.0.1:${port}`, stderr: "" };
  child.stderr?.on("data", (chunk: Buffer) => (host.stderr += chunk.toString()));
  hosts.push(host);
  if (role === "api") await waitForUrl(`${host.base}/api/v1/health`, 90_000);
  return host;
}

beforeAll(async () => {
  database = await createTestDatabase();
  s3 = await startLocalS3();
  [apiA, apiB] = await Promise.all([
    startHost("a", "api"),
    startHost("b", "api"),
    startHost("worker", "worker"),
  ]);
}, 120_000);

afterAll(async () => {
  for (const host of hosts) {
    await stopWith(host.child, "SIGTERM");
    rmSync(host.dataDir, { recursive: true, force: true });
  }
  await s3?.destroy();
  await database?.destroy();
}, 60_000);

type Auth = { Authorization: string };

async function call(host: Host, path: string, auth?: Auth, init: RequestInit = {}): Promise<Response> {
  return fetch(`${host.base}/api/v1${path}`, {
    ...init,
    headers: {
      ...(auth ?? {}),
      ...(init.body ? { "Content-Type": "application/json" } : {}),
      ...init.headers,
    },
  });
}

const post = (host: Host, path: string, auth: Auth, body: unknown, headers: Record<string, string> = {}) =>
  call(host, path, auth, { method: "POST", body: JSON.stringify(body), headers });

/** No process wrote a file to its own disk. */
function expectNoLocalFiles() {
  for (const host of hosts) {
    const files = join(host.dataDir, "files");
    expect(existsSync(files) ? readdirSync(files) : [], host.name).toEqual([]);
  }
}

describe("API processes and a worker on separate hosts, one database and one bucket", () => {
  it("an export made through A is listed and downloaded through B", async () => {
    const { auth } = await buildAccount(database.db);
    const { word } = await buildWordLeads(database.db, 4);
    const made = await post(
      apiA,
      "/leads/export",
      auth,
      { positiveKeywords: [word] },
      { Accept: "text/csv" },
    );
    expect(made.status).toBe(200);
    const file = Buffer.from(await made.arrayBuffer());
    expect(csvRecords(file)).toHaveLength(4);

    const list = await call(apiB, "/export-history", auth);
    expect(list.status).toBe(200);
    const [entry] = ((await list.json()) as { data: { id: number; downloadAvailable: boolean }[] }).data;
    expect(entry).toMatchObject({ downloadAvailable: true });

    const keyed = await call(apiB, `/export-history/${entry!.id}/download`, auth);
    expect(keyed.status).toBe(200);
    expect(Buffer.compare(Buffer.from(await keyed.arrayBuffer()), file)).toBe(0);

    const link = await call(apiB, `/export-history/${entry!.id}/download-url`, auth);
    const { downloadUrl } = ((await link.json()) as { data: { downloadUrl: string } }).data;
    expect(downloadUrl.startsWith(`${s3.endpoint}/${s3.bucket}/`)).toBe(true);
    const direct = await fetch(downloadUrl);
    expect(direct.status).toBe(200);
    expect(Buffer.compare(Buffer.from(await direct.arrayBuffer()), file)).toBe(0);

    // The export's own signed API link (inline: false) made by A works through B too.
    const links = await post(apiA, "/leads/export", auth, { positiveKeywords: [word], inline: false });
    expect(links.status).toBe(200);
    const signed = ((await links.json()) as { data: { files: { directDownloadUrl: string }[] } }).data
      .files[0]!;
    const viaB = await fetch(`${apiB.base}${new URL(signed.directDownloadUrl).pathname}`);
    expect(viaB.status).toBe(200);
    expect(csvRecords(Buffer.from(await viaB.arrayBuffer()))).toHaveLength(4);
    expectNoLocalFiles();
  });

  it("an enrichment run by the worker is downloaded through A's link", async () => {
    const { auth } = await buildAccount(database.db);
    const host = `${uniqueWord()}.test`;
    await buildLead(database.db, { registered_url: `https://www.${host}`, company_name: "Multi Host Co" });
    const submitted = await post(apiA, "/enrichments", auth, { urls: [`https://${host}/`] });
    expect(submitted.status).toBe(202);
    const id = ((await submitted.json()) as { data: { id: number } }).data.id;
    let status = "";
    for (let i = 0; i < 150 && status !== "completed"; i += 1) {
      await new Promise((r) => setTimeout(r, 300));
      status = ((await (await call(apiB, `/enrichments/${id}`, auth)).json()) as { data: { status: string } })
        .data.status;
    }
    expect(status).toBe("completed");
    const link = await call(apiA, `/enrichments/${id}/download`, auth);
    expect(link.status).toBe(200);
    const { downloadUrl } = ((await link.json()) as { data: { downloadUrl: string } }).data;
    const file = await fetch(downloadUrl);
    expect(file.status).toBe(200);
    expect(await file.text()).toContain("Multi Host Co");
    expectNoLocalFiles();
  });

  it("a refresh-and-export through B works on leads exported through A", async () => {
    const account = await buildAccount(database.db);
    const { word } = await buildWordLeads(database.db, 3);
    const made = await post(
      apiA,
      "/leads/export",
      account.auth,
      { positiveKeywords: [word] },
      { Accept: "text/csv" },
    );
    expect(made.status).toBe(200);
    const entries = await database.db
      .selectFrom("lead_export_history")
      .select("id")
      .where("account_id", "=", account.accountId)
      .execute();
    const fresh = await post(
      apiB,
      "/lead-export-history/refresh-and-export",
      account.auth,
      { trackingIds: entries.map((e) => e.id) },
      { Accept: "text/csv" },
    );
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get("content-disposition")).toContain("refreshed-export-");
    expect(csvRecords(Buffer.from(await fresh.arrayBuffer()))).toHaveLength(3);
    expectNoLocalFiles();
  });
});
