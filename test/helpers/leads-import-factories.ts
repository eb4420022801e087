import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** What the admin CLI did: exit code, every stdout line, and the JSON of the last one. */
export interface AdminRun {
  code: number | null;
  lines: string[];
  json: Record<string, unknown>;
}

/** Runs `npm run admin -- <args>` (through tsx) against `databaseUrl` and waits for it to exit. */
export async function runAdminCli(databaseUrl: string, args: string[]): Promise<AdminRun> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/admin.ts", ...args], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "silent" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  const lines = out.split("\n").filter((line) => line.trim() !== "");
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(lines.at(-1) ?? "{}") as Record<string, unknown>;
  } catch {
    throw new Error(`admin printed no JSON: ${out} ${err}`);
  }
  return { code, lines, json };
}

/** A temporary folder for import files; `remove()` deletes it. */
export function tempFolder(): {
  path(name: string): string;
  write(name: string, text: string): string;
  remove(): void;
} {
  const dir = mkdtempSync(join(tmpdir(), "lead-import-test-"));
  return {
    path: (name) => join(dir, name),
    write(name, text) {
      const file = join(dir, name);
      writeFileSync(file, text);
      return file;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** NDJSON text of the given records, one per line. */
export function ndjson(records: unknown[]): string {
  return records.map((r) => JSON.stringify(r)).join("\n") + "\n";
}
