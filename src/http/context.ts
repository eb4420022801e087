import type { Response } from "express";
import type { Logger } from "pino";
import type pg from "pg";
import type { KeyCache } from "../auth/key-cache.js";
import type { AuthContext } from "../auth/service.js";
import type { Config } from "../config.js";
import type { Db } from "../db/database.js";
import type { RateLimits } from "../rate-limit/limiter.js";
import type { FileStorage } from "../storage/file-storage.js";
import type { JobsRuntime } from "../jobs/runtime.js";
import { errors } from "./errors.js";

/** What route modules are built from: passed, not imported, so tests can build their own. */
export interface AppContext {
  config: Config;
  db: Db;
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
}

/** The authenticated caller of a keyed request (set by the auth middleware). */
export function authOf(res: Response): AuthContext {
  const auth = res.locals.auth as AuthContext | undefined;
  if (!auth) throw errors.unauthorized();
  return auth;
}
