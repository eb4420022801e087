import { resolve } from "node:path";

/** Which parts of the service a process runs. */
export type Role = "all" | "api" | "worker";

/** Longest `Prefer: wait` of a long-running request, in seconds (the default wait's bound). */
const MAX_JOB_WAIT_SECONDS = 75;

/** Process configuration, read once from the environment (README, "Configuration"). */
export interface Config {
  port: number;
  host: string;
  role: Role;
  databaseUrl: string | undefined;
  dataDir: string;
  logLevel: string;
  /** Per-IP limits use `X-Forwarded-For` (behind a reverse proxy). */
  trustProxy: boolean;
  /** Validate every response against openapi.yaml (on in tests; costs throughput in production). */
  validateResponses: boolean;
  /** Public base URL used in links the service hands out (job status URLs, signed downloads). */
  publicBaseUrl: string;
  /** Secret for signing download links and OAuth state; unset: one kept in the database. */
  signingSecret: string | undefined;
  /** How long a long-running request waits for its job before answering 202 (ms). */
  jobWaitMs: number;
  /** Outbound fetches to customer-supplied URLs may reach private / loopback addresses (tests only). */
  outboundAllowPrivate: boolean;
  /**
   * SMTP relay for outgoing mail (`smtp://user:pass@host:587`; it holds a password, so it is never
   * logged); unset: every mail is written as an `.eml` file under `DATA_DIR/mail/`.
   */
  smtpUrl: string | undefined;
  /** The `From` of every mail the service sends. */
  mailFrom: string;
}

/** A number from the environment, within 0..max (whole when `integer`); `fallback` when unset. */
function numberFrom(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  { max, integer }: { max: number; integer: boolean },
): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value > max || (integer && !Number.isInteger(value))) {
    throw new Error(`${name} must be ${integer ? "an integer" : "a number"} from 0 to ${max}`);
  }
  return value;
}

function roleFrom(raw: string | undefined): Role {
  const role = raw ?? "all";
  if (role !== "all" && role !== "api" && role !== "worker") {
    throw new Error(`ROLE must be all, api or worker (got ${role})`);
  }
  return role;
}

/**
 * Reads the configuration from environment variables (see README, "Configuration"). Only the
 * entry points (src/main.ts, the admin CLI, benchmarks and tests) call it; everything below is
 * given the values it needs.
 */
export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const port = numberFrom(env, "PORT", 3000, { max: 65_535, integer: true });
  return {
    port,
    host: env.HOST ?? "0.0.0.0",
    role: roleFrom(env.ROLE),
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: resolve(env.DATA_DIR ?? "./.data"),
    logLevel: env.LOG_LEVEL ?? "info",
    trustProxy: env.TRUST_PROXY === "true",
    validateResponses: env.VALIDATE_RESPONSES === "true",
    publicBaseUrl: (env.PUBLIC_BASE_URL ?? `http://localhost:${port}`).replace(/\/+$/, ""),
    signingSecret: env.SIGNING_SECRET || undefined,
    jobWaitMs: Math.round(
      numberFrom(env, "JOB_WAIT_SECONDS", MAX_JOB_WAIT_SECONDS, {
        max: MAX_JOB_WAIT_SECONDS,
        integer: false,
      }) * 1000,
    ),
    outboundAllowPrivate: env.OUTBOUND_ALLOW_PRIVATE === "true",
    smtpUrl: env.SMTP_URL || undefined,
    mailFrom: env.MAIL_FROM || "Lead Service <no-reply@localhost>",
  };
}
