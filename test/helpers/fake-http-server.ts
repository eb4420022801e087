import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local HTTP server standing in for an outside service in tests: `start` listens on a free
 * loopback port (its address in `url`) and hands each request with its whole body to `handle`;
 * `stop` closes it with its connections.
 */
export abstract class FakeHttpServer {
  server!: http.Server;
  url = "";

  protected abstract handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string): void;

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => this.handle(req, res, Buffer.concat(chunks).toString("utf8")));
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
