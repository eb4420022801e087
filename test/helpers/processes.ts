import { spawn, type ChildProcess } from "node:child_process";

const TSX = ["--import", "tsx"];

/** Runs a TypeScript entry point of the service as a child process with its own environment. */
export function startService(entry: string, env: Record<string, string>, args: string[] = []): ChildProcess {
  return spawn(process.execPath, [...TSX, entry, ...args], {
    env: { ...process.env, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Runs the admin CLI to completion; resolves with its exit code and the JSON line it printed. */
export async function runAdmin(
  env: Record<string, string>,
  args: string[],
): Promise<{ code: number | null; json: Record<string, unknown> }> {
  const child = startService("src/cli/admin.ts", env, args);
  let out = "";
  child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  const line = out.trim().split("\n").at(-1) ?? "{}";
  return { code, json: JSON.parse(line) as Record<string, unknown> };
}

/** Polls a URL until it answers (any status below 500), or fails after `timeoutMs`. */
export async function waitForUrl(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (res.status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

/** Sends a signal and resolves with the exit code (kills after `timeoutMs`). */
export async function stopWith(
  child: ChildProcess,
  signal: NodeJS.Signals,
  timeoutMs = 20_000,
): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  child.kill(signal);
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const code = await exited;
  clearTimeout(timer);
  return code;
}
