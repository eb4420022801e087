import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listenPort } from "./helpers/ports.js";
import { runAdmin, startService, stopWith, waitForUrl } from "./helpers/processes.js";

// `npm start` as a newcomer runs it: no DATABASE_URL, an embedded PostgreSQL under DATA_DIR.
const dataDir = mkdtempSync(join(tmpdir(), "lead-start-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function postmasterPid(): number | undefined {
  const file = join(dataDir, "pg", "postmaster.pid");
  return existsSync(file) ? Number(readFileSync(file, "utf8").split("\n")[0]) : undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("npm start with the embedded PostgreSQL", () => {
  it("serves GET /me for a key made with the admin CLI, shares the server with a worker process, and stops cleanly", async () => {
    const port = await listenPort();
    const env = { DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1" };
    const api = startService("src/main.ts", { ...env, ROLE: "api" });
    let apiErr = "";
    api.stderr?.on("data", (c: Buffer) => (apiErr += c.toString()));
    try {
      await waitForUrl(`http://127.0.0.1:${port}/api/v1/health`);
      const health = await (await fetch(`http://127.0.0.1:${port}/api/v1/health`)).json();
      expect(health).toMatchObject({ status: "ok" });

      // The admin CLI finds the embedded server the API process runs on the same DATA_DIR.
      const created = await runAdmin({ DATA_DIR: dataDir }, [
        "create-account",
        "--email",
        "newcomer@example.com",
        "--plan",
        "scale",
      ]);
      expect(created.code).toBe(0);
      expect(created.json).toEqual({
        accountId: expect.any(Number),
        apiKey: expect.stringMatching(/^svck_/),
      });

      const me = await fetch(`http://127.0.0.1:${port}/api/v1/me`, {
        headers: { Authorization: `Bearer ${created.json.apiKey as string}` },
      });
      expect(me.status).toBe(200);
      expect(((await me.json()) as { data: { monthlyCredits: number } }).data.monthlyCredits).toBe(10_000);

      const key = await runAdmin({ DATA_DIR: dataDir }, [
        "create-key",
        "--account",
        String(created.json.accountId),
      ]);
      expect(key.json).toEqual({ keyId: expect.any(Number), apiKey: expect.stringMatching(/^svck_/) });
      const revoked = await runAdmin({ DATA_DIR: dataDir }, [
        "revoke-key",
        "--key",
        key.json.apiKey as string,
      ]);
      expect(revoked.json).toEqual({ keyId: key.json.keyId, revoked: true });
      const refused = await fetch(`http://127.0.0.1:${port}/api/v1/me`, {
        headers: { Authorization: `Bearer ${key.json.apiKey as string}` },
      });
      expect(refused.status).toBe(401);

      const bad = await runAdmin({ DATA_DIR: dataDir }, [
        "create-account",
        "--email",
        "x@example.com",
        "--plan",
        "gold",
      ]);
      expect(bad.code).toBe(1);
      expect(bad.json).toEqual({ error: expect.stringContaining("gold") });

      // A worker-only process joins the same embedded server and stops without stopping it.
      const worker = startService("src/main.ts", { DATA_DIR: dataDir, ROLE: "worker", LOG_LEVEL: "info" });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("worker did not start")), 60_000);
        let out = "";
        worker.stdout?.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes("worker started")) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      expect(await stopWith(worker, "SIGTERM")).toBe(0);
      expect((await fetch(`http://127.0.0.1:${port}/api/v1/health`)).status).toBe(200);
    } finally {
      const pid = postmasterPid();
      const code = await stopWith(api, "SIGTERM");
      expect(code, apiErr).toBe(0);
      // The process that started the embedded server stops it on shutdown.
      if (pid !== undefined) {
        for (let i = 0; i < 50 && alive(pid); i += 1) await new Promise((r) => setTimeout(r, 100));
        expect(alive(pid)).toBe(false);
      }
    }
  }, 180_000);
});
