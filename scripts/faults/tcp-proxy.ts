import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";

// A loopback TCP proxy in front of a dependency (PostgreSQL, an SMTP relay) that a fault scenario
// or test cuts (every open connection reset, new ones refused: the port is closed) and restores on
// the same port.

/** A loopback TCP proxy to `target` that can be cut and restored on the same port. */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on("close", () => this.sockets.delete(socket));
        socket.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Resets every open connection and refuses new ones (the port is closed). */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.resetAndDestroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }

  /** Listens again on the same port (nothing when it listens already). */
  async restore(): Promise<void> {
    if (!this.server) await this.start();
  }
}
