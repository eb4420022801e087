import { Logger as WorkerLogger, runMigrations } from "graphile-worker";
import type { Logger } from "pino";
import type pg from "pg";
import type { NotificationListener } from "../db/notifications.js";
import { JobNotifier } from "./notifier.js";
import type { JobSettings } from "./settings.js";

/** graphile-worker's logger, writing to the service's pino logger. */
export function workerLogger(logger: Logger): WorkerLogger {
  return new WorkerLogger((scope) => (level, message, meta) => {
    const method =
      level === "error" ? "error" : level === "warning" ? "warn" : level === "info" ? "info" : "debug";
    logger[method]({ ...scope, ...meta }, message);
  });
}

/**
 * What the job protocol needs in an API process (`ctx.jobs`): its settings, the shared LISTEN
 * connection, and the graphile-worker schema (installed once, so a job can be queued in the
 * transaction that creates it even in a process that runs no worker).
 */
export class JobsRuntime {
  readonly notifier: JobNotifier;
  private queueReady: Promise<void> | undefined;

  /** `notifications`: the process's shared listener (`src/db/notifications.ts`). */
  constructor(
    private readonly pool: pg.Pool,
    private readonly logger: Logger,
    readonly settings: JobSettings,
    notifications: NotificationListener,
  ) {
    this.notifier = new JobNotifier(notifications);
  }

  /** Installs or upgrades graphile-worker's schema (once per process; idempotent). */
  ensureQueue(): Promise<void> {
    this.queueReady ??= runMigrations({ pgPool: this.pool, logger: workerLogger(this.logger) }).catch(
      (err: unknown) => {
        this.queueReady = undefined;
        throw err;
      },
    );
    return this.queueReady;
  }

  /** Ends the notifier's subscription (and its own LISTEN connection, if it has one). */
  async close(): Promise<void> {
    await this.notifier.close();
  }
}
