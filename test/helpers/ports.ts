import { createServer } from "node:net";

/**
 * A free loopback port below the kernel's ephemeral range (32768-60999 on Linux), for a process
 * told to listen on it: a port the OS hands out for `listen(0)` can be handed out again before
 * that process binds it (the embedded PostgreSQL the process starts first asks for one too).
 */
export async function listenPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.unref();
      server.once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error("no free port below the ephemeral range");
}
