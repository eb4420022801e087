import type { Logger } from "pino";
import type pg from "pg";
import { FINISHED_CHANNEL } from "./repository.js";

/**
 * One LISTEN connection per process for "job finished" notifications (sent by whichever worker
 * stored the answer), shared by every waiting request and poll. If the connection drops it is
 * opened again; waiters also re-read the job row now and then, so a missed notification only
 * delays an answer.
 */
export class JobNotifier {
  private client: pg.PoolClient | undefined;
  private starting: Promise<void> | undefined;
  private closed = false;
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly logger: Logger,
  ) {}

  /** Opens the listening connection (once; later calls wait for the same start). */
  start(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.starting ??= this.connect().catch((err: unknown) => {
      this.logger.warn({ err }, "job notifier could not listen; falling back to polling");
      this.starting = undefined;
    });
    return this.starting;
  }

  private async connect(): Promise<void> {
    const client = await this.pool.connect();
    const onEnd = (err?: unknown) => {
      if (this.client !== client) return;
      this.client = undefined;
      this.starting = undefined;
      client.release(true);
      if (!this.closed) {
        this.logger.warn({ err }, "job notifier connection lost; reconnecting");
        setTimeout(() => void this.start(), 1_000).unref();
      }
    };
    client.on("notification", (message) => {
      if (message.channel === FINISHED_CHANNEL && message.payload) this.wake(message.payload);
    });
    client.on("error", onEnd);
    client.on("end", () => onEnd());
    await client.query(`listen ${FINISHED_CHANNEL}`);
    if (this.closed) {
      client.release(true);
      return;
    }
    this.client = client;
  }

  private wake(jobId: string): void {
    const set = this.waiters.get(jobId);
    if (!set) return;
    this.waiters.delete(jobId);
    for (const resolve of set) resolve();
  }

  /**
   * A promise that resolves on the next "finished" notification of the job, and a cancel
   * function. Subscribe before reading the job row, so no notification falls in between.
   */
  subscribe(jobId: string): { finished: Promise<void>; cancel: () => void } {
    let resolveFn: () => void = () => {};
    const finished = new Promise<void>((resolve) => {
      resolveFn = resolve;
    });
    const set = this.waiters.get(jobId) ?? new Set();
    set.add(resolveFn);
    this.waiters.set(jobId, set);
    const cancel = () => {
      const current = this.waiters.get(jobId);
      current?.delete(resolveFn);
      if (current?.size === 0) this.waiters.delete(jobId);
    };
    return { finished, cancel };
  }

  /** Stops listening and wakes every waiter (they re-read their job). */
  async close(): Promise<void> {
    this.closed = true;
    await this.starting;
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.query(`unlisten ${FINISHED_CHANNEL}`);
      } catch {
        // The connection is going away anyway.
      }
      client.release(true);
    }
    for (const id of [...this.waiters.keys()]) this.wake(id);
  }
}
