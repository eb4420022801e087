import type { NotificationListener, Subscription } from "../db/notifications.js";
import { FINISHED_CHANNEL } from "./repository.js";

/**
 * "Job finished" notifications (sent by whichever worker stored the answer) for every waiting
 * request and poll of the process, through one subscription to `jobs_finished` on the process's
 * shared listener (`src/db/notifications.ts`, which reconnects when its connection drops). A
 * missed notification only delays an answer: waiters re-read the job row now and then, and are
 * all woken to re-read it whenever the channel is heard again after a loss.
 */
export class JobNotifier {
  private subscription: Subscription | undefined;
  private closed = false;
  private readonly waiters = new Map<string, Set<() => void>>();

  /** `listener`: the process's shared listener. */
  constructor(private readonly listener: NotificationListener) {}

  /**
   * Subscribes (once; later calls wait for the same subscription). Resolves once notifications are
   * heard or the attempt failed (waiters then fall back to re-reading); never rejects.
   */
  start(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.subscription ??= this.listener.subscribe(FINISHED_CHANNEL, {
      message: (jobId) => {
        if (jobId) this.wake(jobId);
      },
      // Heard (again): a job may have finished unheard while nothing listened.
      listening: () => this.wakeAll(),
    });
    return this.subscription.ready;
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

  /** Ends the subscription and wakes every waiter (they re-read their job). */
  async close(): Promise<void> {
    this.closed = true;
    const subscription = this.subscription;
    this.subscription = undefined;
    await subscription?.unsubscribe();
    this.wakeAll();
  }

  private wakeAll(): void {
    for (const id of [...this.waiters.keys()]) this.wake(id);
  }
}
