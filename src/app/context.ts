import type { Logger } from "pino";
import type pg from "pg";
import type { KeyCache } from "../auth/key-cache.js";
import type { Config } from "../config.js";
import type { Db } from "../db/database.js";
import type { JobsRuntime } from "../jobs/runtime.js";
import type { Outbound } from "../outbound/index.js";
import type { SchemaTypesCache } from "../leads/schema-types.js";
import type { RateLimits } from "../rate-limit/limiter.js";
import type { FileStorage } from "../storage/file-storage.js";

/**
 * What an API process is built from (src/main.ts builds it; tests build their own). Each area's
 * handlers take the parts they need from it, passed, not imported.
 */
export interface AppContext {
  config: Config;
  db: Db;
  /** The search pool: lead search statements only, with the search's settings (src/leads/search/settings.ts). */
  searchDb: Db;
  pool: pg.Pool;
  logger: Logger;
  rateLimits: RateLimits;
  /** Export files and large job answers. */
  storage: FileStorage;
  /** Signs download links and OAuth state; the same in every process of the deployment. */
  signingSecret: string;
  /** The job protocol of long-running requests: settings and the shared LISTEN connection. */
  jobs: JobsRuntime;
  /** Recently used API keys, kept correct through Postgres notifications; absent: always read. */
  keyCache?: KeyCache;
  /** The distinct website schema types of the lead database (built in the background). */
  schemaTypes: SchemaTypesCache;
  /**
   * Every outbound fetch to a customer-supplied URL goes through it, so private, loopback and
   * metadata addresses are refused alike everywhere (and `OUTBOUND_ALLOW_PRIVATE` lifts that alike).
   */
  outbound: Outbound;
}
