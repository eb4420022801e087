import type pg from "pg";
import type { Logger } from "pino";
import { isDependencyUnavailable } from "../http/unavailable.js";

/** Longest a queue operation waits for the database to come back before it fails. */
const DEFAULT_MAX_WAIT_MS = 5 * 60_000;
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 2_000;

/**
 * The pool graphile-worker runs on, waiting out a database outage: `connect()` that fails because
 * the database cannot be reached (refused, restarting, shutting down) is tried again with a
 * doubling pause (100 ms to 2 s) for up to `maxWaitMs`, instead of failing.
 *
 * Why: graphile-worker 0.17 retries marking a job done or failed only on a few codes
 * (serialization failures, 57P03, host unreachable) and does not await that call: a refused
 * connection while PostgreSQL was stopped became an unhandled rejection, which ends the process
 * (in tests: test/faults-postgres-outage.test.ts). Finding jobs and marking them now wait for the
 * database instead (docs/reliability.md). Only the queue's own connections wait: the tasks' queries run on
 * the service's pool and fail, and their jobs are retried by graphile-worker.
 */
export function waitingForDatabase(pool: pg.Pool, logger: Logger, maxWaitMs = DEFAULT_MAX_WAIT_MS): pg.Pool {
  const connectWaiting = async (): Promise<pg.PoolClient> => {
    const deadline = Date.now() + maxWaitMs;
    let delay = FIRST_RETRY_MS;
    let warned = false;
    for (;;) {
      try {
        const client = await pool.connect();
        if (warned) logger.warn("worker reconnected to the database");
        return reportingLoss(client);
      } catch (err) {
        if (!isDependencyUnavailable(err) || pool.ending || Date.now() + delay > deadline) throw err;
        if (!warned) logger.warn({ err }, "worker cannot reach the database; waiting for it");
        warned = true;
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, MAX_RETRY_MS);
      }
    }
  };
  type Callback = (
    err: Error | undefined,
    client?: pg.PoolClient,
    done?: (release?: unknown) => void,
  ) => void;
  function connect(callback?: Callback): Promise<pg.PoolClient> | undefined {
    if (!callback) return connectWaiting();
    connectWaiting().then(
      (client) => callback(undefined, client, (release?: unknown) => client.release(release as Error)),
      (err: Error) => callback(err),
    );
    return undefined;
  }
  return new Proxy(pool, {
    get(target, property) {
      if (property === "connect") return connect;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * The code graphile-worker retries its own statements on (with a pause from 3 s growing to 2 min,
 * up to 100 times): 57P03 `cannot_connect_now`.
 */
const RETRIED_BY_THE_QUEUE = "57P03";

/** A connection of the queue lost in the middle of a statement, told as graphile-worker retries it. */
class QueueConnectionLost extends Error {
  readonly code = RETRIED_BY_THE_QUEUE;
  constructor(cause: unknown) {
    super(`the database connection was lost: ${(cause as Error).message}`, { cause });
    this.name = "QueueConnectionLost";
  }
}

/**
 * A client of the queue whose statements, when the connection is lost under them (reset,
 * terminated, the server shutting down with 57P01), fail with code 57P03. graphile-worker does
 * not wait on its promise to mark a job done or failed (an error there was an unhandled rejection
 * that ended the process) and retries it only on a few codes; with this it retries until the
 * database is back. Those statements are safe to repeat: each changes only a job still locked by
 * this worker pool, so one that had committed changes nothing the second time.
 */
function reportingLoss(client: pg.PoolClient): pg.PoolClient {
  const query = (...args: unknown[]): unknown => {
    const result: unknown = (client.query as (...a: unknown[]) => unknown)(...args);
    if (typeof args.at(-1) === "function" || !(result instanceof Promise)) return result;
    return result.catch((err: unknown) => {
      throw isDependencyUnavailable(err) ? new QueueConnectionLost(err) : err;
    });
  };
  return new Proxy(client, {
    get(target, property) {
      if (property === "query") return query;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * A graphile-worker plugin that replaces a worker which exited early (after it could not mark
 * its job done or failed, for example when the connection died in the middle of that query),
 * instead of shutting the whole pool down as graphile-worker does by default. The
 * job it held stays locked until the process stops (graceful shutdown unlocks it) or graphile-
 * worker's lock expires, and then runs again: at least once, never lost.
 */
export function replaceExitedWorkers(logger: Logger): GraphileConfig.Plugin {
  return {
    name: "ReplaceExitedWorkers",
    version: "1.0.0",
    worker: {
      middleware: {
        poolWorkerPrematureExit(_next, event) {
          logger.warn({ workerId: event.worker.workerId }, "a worker exited early; replacing it");
          // At once: a pool left with no worker shuts itself down right after this returns. The
          // new worker's first query waits for the database (waitingForDatabase), so it cannot spin.
          event.replaceWithNewWorker();
        },
      },
    },
  };
}
