import { api } from "./harness.js";

// Bounded API traffic for the fault scenarios: a fixed number of clients, each sending one request
// after the other until stopped; every answer is counted by operation and status.

/** One kind of request the clients send. */
export interface Operation {
  name: string;
  /** The request for client `client`'s `n`-th call. */
  request(
    client: number,
    n: number,
  ): { key: string; method: string; path: string; body?: unknown; headers?: Record<string, string> };
  /** Called with each answer (a scenario keeps job ids, for example). */
  answered?(status: number, body: Record<string, unknown>, headers: Headers, key: string): void;
}

export interface TrafficCounts {
  requests: number;
  byStatus: Map<number, number>;
  /** 503 answers without a `Retry-After` header. */
  unavailableWithoutRetryAfter: number;
  /** 503 answers whose code was not `service_unavailable`. */
  unavailableOtherCode: number;
  /** Requests that got no answer within the time limit. */
  hung: number;
  /** Requests refused or cut on the way (the process down). */
  networkErrors: number;
  slowestMs: number;
  /** Milliseconds of every answered request, by operation name. */
  latencies: Map<string, number[]>;
  /** Answers of 500 and above (503 included), by operation name. */
  serverErrors: Map<string, number>;
  /** Counts of the requests sent in a window (see `mark`). */
  windows: Map<string, Map<number | "hung" | "network", number>>;
}

/**
 * Runs `clients` clients until `stop()`, client `c`'s `n`-th request being `choose(c, n)`, each
 * pausing `pauseMs` between requests (bounded load); `mark` names the current window.
 */
export function startTraffic(
  base: string,
  choose: (client: number, n: number) => Operation,
  clients: number,
  { pauseMs = 100, timeoutMs = 15_000 }: { pauseMs?: number; timeoutMs?: number } = {},
): { counts: TrafficCounts; mark(window: string): void; stop(): Promise<TrafficCounts> } {
  const counts: TrafficCounts = {
    requests: 0,
    byStatus: new Map(),
    unavailableWithoutRetryAfter: 0,
    unavailableOtherCode: 0,
    hung: 0,
    networkErrors: 0,
    slowestMs: 0,
    latencies: new Map(),
    serverErrors: new Map(),
    windows: new Map(),
  };
  let window = "before";
  let running = true;
  const bump = (what: number | "hung" | "network") => {
    let w = counts.windows.get(window);
    if (!w) counts.windows.set(window, (w = new Map()));
    w.set(what, (w.get(what) ?? 0) + 1);
  };
  const loop = async (client: number) => {
    for (let n = 0; running; n += 1) {
      const operation = choose(client, n);
      const { key, method, path, body, headers } = operation.request(client, n);
      const started = Date.now();
      counts.requests += 1;
      try {
        const res = await api(base, key, method, path, body, timeoutMs, headers);
        counts.byStatus.set(res.status, (counts.byStatus.get(res.status) ?? 0) + 1);
        bump(res.status);
        const took = Date.now() - started;
        const list = counts.latencies.get(operation.name);
        if (list) list.push(took);
        else counts.latencies.set(operation.name, [took]);
        if (res.status >= 500) {
          counts.serverErrors.set(operation.name, (counts.serverErrors.get(operation.name) ?? 0) + 1);
        }
        if (res.status === 503) {
          if (!res.headers.get("retry-after")) counts.unavailableWithoutRetryAfter += 1;
          if (res.body.error !== "service_unavailable") counts.unavailableOtherCode += 1;
        }
        operation.answered?.(res.status, res.body, res.headers, key);
      } catch (err) {
        const name = (err as Error).name;
        if (name === "TimeoutError" || name === "AbortError") {
          counts.hung += 1;
          bump("hung");
        } else {
          counts.networkErrors += 1;
          bump("network");
          // The process is down: do not spin.
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      counts.slowestMs = Math.max(counts.slowestMs, Date.now() - started);
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  };
  const loops = Array.from({ length: clients }, (_, i) => loop(i));
  return {
    counts,
    mark: (name) => void (window = name),
    async stop() {
      running = false;
      await Promise.all(loops);
      return counts;
    },
  };
}

/** `{200: 10, 503: 2}` as `200:10,503:2`. */
export function statusSummary(byStatus: Map<number | string, number>): string {
  return [...byStatus.entries()]
    .sort(([a], [b]) => String(a).localeCompare(String(b)))
    .map(([s, n]) => `${s}:${n}`)
    .join(",");
}

/** The `p`-th percentile (0-100) of `values` (nearest rank); 0 when there are none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
