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
  /** Payment processor (Stripe) secret key (never logged); unset: the money endpoints answer 503. */
  stripeSecretKey: string | undefined;
  /** Signing secret of the payment processor's webhook (`whsec_...`, never logged). */
  stripeWebhookSecret: string | undefined;
  /** Base URL of the payment processor's API (`http://127.0.0.1:port` in tests); unset: Stripe's own. */
  stripeApiBase: string | undefined;
  /** The AI helpers' chat model (`AI_MODEL` set); unset: their built-in back end, no network. */
  aiModel: AiModelConfig | undefined;
  /** The CRM providers configured for this deployment and the key of their tokens at rest. */
  crm: CrmConfig;
  /** Object storage of the files (`S3_BUCKET` set); unset: local disk under `DATA_DIR/files`. */
  s3: S3Config | undefined;
  /**
   * `DELIVERY_RETRY_DELAYS_MS`: the waits (ms) before the automatic retries of a failed delivery,
   * one per retry; unset: the production schedule (`RETRY_DELAYS_MS` in
   * src/integrations/deliveries/schedule.ts, 5 s ... 24 h). Fault drills shorten it so a failing
   * receiver runs through its retries and `needs_attention` in seconds.
   */
  deliveryRetryDelaysMs: readonly number[] | undefined;
}

/**
 * The bucket that holds the files (README, "Configuration"). Credentials are not part of it: the
 * AWS SDK reads them by its usual chain (`AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`, a profile,
 * an instance or task role), and they are never logged.
 */
export interface S3Config {
  /** `S3_BUCKET`. */
  bucket: string;
  /** `S3_REGION` (default `AWS_REGION`, then `us-east-1`). */
  region: string;
  /** `S3_ENDPOINT`: an S3-compatible store (MinIO, R2, ...); unset: AWS S3. */
  endpoint: string | undefined;
  /** `S3_FORCE_PATH_STYLE=true`: path-style URLs (`endpoint/bucket/key`), as MinIO needs. */
  forcePathStyle: boolean;
}

/** The bucket when `S3_BUCKET` is set; the other `S3_*` variables without it are a mistake. */
function s3From(env: NodeJS.ProcessEnv): S3Config | undefined {
  const bucket = env.S3_BUCKET?.trim();
  if (!bucket) {
    if (env.S3_ENDPOINT || env.S3_REGION || env.S3_FORCE_PATH_STYLE) {
      throw new Error("S3_ENDPOINT, S3_REGION and S3_FORCE_PATH_STYLE need S3_BUCKET");
    }
    return undefined;
  }
  const pathStyle = env.S3_FORCE_PATH_STYLE ?? "false";
  if (pathStyle !== "true" && pathStyle !== "false")
    throw new Error("S3_FORCE_PATH_STYLE must be true or false");
  return {
    bucket,
    region: env.S3_REGION || env.AWS_REGION || "us-east-1",
    endpoint: env.S3_ENDPOINT?.replace(/\/+$/, "") || undefined,
    forcePathStyle: pathStyle === "true",
  };
}

/** One CRM's OAuth client and the base URLs of its API and OAuth pages (README, "Configuration"). */
export interface CrmClientConfig {
  /** `CRM_<ID>_CLIENT_ID`. */
  clientId: string;
  /** `CRM_<ID>_CLIENT_SECRET` (never logged). */
  clientSecret: string;
  /** Base of the CRM's API (`crm_deals`: its OAuth server; the API domain comes with each token). */
  apiBase: string;
  /** Base of the CRM's authorization page and token endpoint. */
  authBase: string;
  /** `crm_leads` only: base of the sandbox login (authorization and token endpoint). */
  sandboxAuthBase?: string;
}

/** The CRMs: each is available only when its client id and secret are set. */
export interface CrmConfig {
  contacts: CrmClientConfig | undefined;
  leads: CrmClientConfig | undefined;
  deals: CrmClientConfig | undefined;
  /** AES-256 keys of stored CRM tokens (`CRM_TOKEN_KEY`, then `CRM_TOKEN_KEYS_PREVIOUS`); the first encrypts. */
  tokenKeys: Buffer[];
}

function crmClientFrom(
  env: NodeJS.ProcessEnv,
  id: "CONTACTS" | "LEADS" | "DEALS",
  defaults: { apiBase: string; authBase: string; sandboxAuthBase?: string },
): CrmClientConfig | undefined {
  const clientId = env[`CRM_${id}_CLIENT_ID`] || undefined;
  const clientSecret = env[`CRM_${id}_CLIENT_SECRET`] || undefined;
  if (!clientId && !clientSecret) return undefined;
  if (!clientId || !clientSecret)
    throw new Error(`CRM_${id}_CLIENT_ID and CRM_${id}_CLIENT_SECRET go together`);
  const base = (name: string, fallback: string) => (env[name] || fallback).replace(/\/+$/, "");
  return {
    clientId,
    clientSecret,
    apiBase: base(`CRM_${id}_API_BASE`, defaults.apiBase),
    authBase: base(`CRM_${id}_AUTH_BASE`, defaults.authBase),
    ...(defaults.sandboxAuthBase
      ? { sandboxAuthBase: base(`CRM_${id}_SANDBOX_AUTH_BASE`, defaults.sandboxAuthBase) }
      : {}),
  };
}

/** A 32-byte key given as base64 or 64 hex digits. */
function tokenKeyFrom(name: string, raw: string): Buffer {
  const key = /^[0-9a-f]{64}$/i.test(raw) ? Buffer.from(raw, "hex") : Buffer.from(raw, "base64");
  if (key.length !== 32) throw new Error(`${name} must be 32 bytes, as base64 or 64 hex digits`);
  return key;
}

function crmFrom(env: NodeJS.ProcessEnv): CrmConfig {
  const crm: CrmConfig = {
    contacts: crmClientFrom(env, "CONTACTS", {
      apiBase: "https://api.hubapi.com",
      authBase: "https://app.hubspot.com",
    }),
    leads: crmClientFrom(env, "LEADS", {
      apiBase: "https://login.salesforce.com",
      authBase: "https://login.salesforce.com",
      sandboxAuthBase: "https://test.salesforce.com",
    }),
    deals: crmClientFrom(env, "DEALS", {
      apiBase: "https://api.pipedrive.com",
      authBase: "https://oauth.pipedrive.com",
    }),
    tokenKeys: [],
  };
  const current = env.CRM_TOKEN_KEY?.trim();
  if (current) {
    crm.tokenKeys.push(tokenKeyFrom("CRM_TOKEN_KEY", current));
    for (const old of (env.CRM_TOKEN_KEYS_PREVIOUS ?? "").split(",").map((k) => k.trim())) {
      if (old) crm.tokenKeys.push(tokenKeyFrom("CRM_TOKEN_KEYS_PREVIOUS", old));
    }
  }
  if ((crm.contacts || crm.leads || crm.deals) && crm.tokenKeys.length === 0) {
    throw new Error("CRM_TOKEN_KEY is required when a CRM client is configured");
  }
  return crm;
}

/** The OpenAI-compatible chat model of the AI helpers (README, "Configuration"). */
export interface AiModelConfig {
  /** Base URL of the Chat Completions API (`AI_BASE_URL`, default OpenAI's). */
  baseUrl: string;
  /** `AI_API_KEY` (never logged); local servers (Ollama, vLLM) may need none. */
  apiKey: string | undefined;
  /** `AI_MODEL`, the model name the server knows. */
  model: string;
  /** Time limit of one model call (`AI_TIMEOUT_SECONDS`, default 30). */
  timeoutMs: number;
  /** Most tokens one answer may use (`AI_MAX_TOKENS`, default 1,500). */
  maxTokens: number;
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

/** Longest wait of one retry in `DELIVERY_RETRY_DELAYS_MS` (a week, in ms). */
const MAX_RETRY_DELAY_MS = 7 * 24 * 3_600_000;

/**
 * `DELIVERY_RETRY_DELAYS_MS`: comma-separated whole milliseconds, each from 1 to a week (at least
 * one); unset or empty: the production schedule.
 */
function retryDelaysFrom(raw: string | undefined): readonly number[] | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const parts = raw.split(",").map((p) => p.trim());
  const delays = parts.map((p) => (/^[0-9]+$/.test(p) ? Number(p) : NaN));
  if (delays.some((d) => !Number.isSafeInteger(d) || d < 1 || d > MAX_RETRY_DELAY_MS)) {
    throw new Error(
      `DELIVERY_RETRY_DELAYS_MS must be comma-separated whole milliseconds from 1 to ${MAX_RETRY_DELAY_MS} ` +
        `(for example "200,400,800"; got "${raw}")`,
    );
  }
  return delays;
}

function roleFrom(raw: string | undefined): Role {
  const role = raw ?? "all";
  if (role !== "all" && role !== "api" && role !== "worker") {
    throw new Error(`ROLE must be all, api or worker (got ${role})`);
  }
  return role;
}

/** The AI model when `AI_MODEL` is set; `AI_BASE_URL` or `AI_API_KEY` without it is a mistake. */
function aiModelFrom(env: NodeJS.ProcessEnv): AiModelConfig | undefined {
  const model = env.AI_MODEL?.trim();
  if (!model) {
    if (env.AI_BASE_URL || env.AI_API_KEY) throw new Error("AI_BASE_URL and AI_API_KEY need AI_MODEL");
    return undefined;
  }
  return {
    baseUrl: (env.AI_BASE_URL || "https://api.openai.com/v1").replace(/\/+$/, ""),
    apiKey: env.AI_API_KEY || undefined,
    model,
    timeoutMs: numberFrom(env, "AI_TIMEOUT_SECONDS", 30, { max: 600, integer: false }) * 1000,
    maxTokens: numberFrom(env, "AI_MAX_TOKENS", 1500, { max: 100_000, integer: true }),
  };
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
    stripeSecretKey: env.STRIPE_SECRET_KEY || undefined,
    stripeWebhookSecret: env.STRIPE_WEBHOOK_SECRET || undefined,
    stripeApiBase: env.STRIPE_API_BASE || undefined,
    aiModel: aiModelFrom(env),
    crm: crmFrom(env),
    s3: s3From(env),
    deliveryRetryDelaysMs: retryDelaysFrom(env.DELIVERY_RETRY_DELAYS_MS),
  };
}
