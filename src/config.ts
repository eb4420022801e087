import { resolve } from "node:path";

/** Which parts of the service a process runs. */
export type Role = "all" | "api" | "worker";

/** Process configuration, read once from the environment. */
export interface Config {
  port: number;
  host: string;
  role: Role;
  databaseUrl: string | undefined;
  dataDir: string;
  logLevel: string;
  /** Validate every response against openapi.yaml (on in tests; costs throughput in production). */
  validateResponses: boolean;
  /** Public base URL used in links the service hands out (job status URLs, signed downloads). */
  publicBaseUrl: string;
  /** Secret for signing download links and OAuth state; random per process when unset. */
  signingSecret: string | undefined;
  /** Outbound fetches may reach private / loopback addresses (tests only). */
  allowPrivateNetworkFetch: boolean;
}

function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer`);
  return value;
}

function roleFromEnv(raw: string | undefined): Role {
  const role = raw ?? "all";
  if (role !== "all" && role !== "api" && role !== "worker") {
    throw new Error(`ROLE must be all, api or worker (got ${role})`);
  }
  return role;
}

/** Reads the configuration from environment variables (see README, "Configuration"). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = intFromEnv("PORT", 3000);
  return {
    port,
    host: env.HOST ?? "0.0.0.0",
    role: roleFromEnv(env.ROLE),
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: resolve(env.DATA_DIR ?? "./.data"),
    logLevel: env.LOG_LEVEL ?? "info",
    validateResponses: env.VALIDATE_RESPONSES === "true",
    publicBaseUrl: (env.PUBLIC_BASE_URL ?? `http://localhost:${port}`).replace(/\/+$/, ""),
    signingSecret: env.SIGNING_SECRET || undefined,
    allowPrivateNetworkFetch: env.ALLOW_PRIVATE_NETWORK_FETCH === "true",
  };
}
