/**
 * The politeness delay of one process: requests to the same host start at least `delayMs` apart
 * (a site's `Crawl-delay` can ask for more), whichever run or fetcher sends them.
 */
export class HostGate {
  private readonly next = new Map<string, number>();

  constructor(private readonly delayMs: number) {}

  /** Waits for the host's turn and books the next one `delayMs` (or `minDelayMs`, if larger) later. */
  async wait(host: string, minDelayMs = 0, signal?: AbortSignal): Promise<void> {
    const now = Date.now();
    const at = Math.max(now, this.next.get(host) ?? 0);
    this.next.set(host, at + Math.max(this.delayMs, minDelayMs));
    this.prune(now);
    if (at > now) await sleep(at - now, signal);
  }

  /** Forgets hosts whose turn has passed (the map stays as large as the hosts in flight). */
  private prune(now: number): void {
    if (this.next.size < 10_000) return;
    for (const [host, at] of this.next) if (at < now) this.next.delete(host);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
