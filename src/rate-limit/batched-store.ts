import type pg from "pg";

/** Name rate-limiter-flexible gives the counting upsert of table `rate_limits` (`consume`). */
export const LIBRARY_UPSERT_NAME = "rate_limits:rlflx-upsert";

/**
 * The library's counting upsert (RateLimiterPostgres._upsert, rate-limiter-flexible 11.4.0,
 * without `forceExpire`) for many keys at once: a key whose window has expired starts again from
 * the consumed points and a new expiry, otherwise the points are added. `$4` is the time the batch
 * is sent. Rows are written in key order, so two batches sharing keys (concurrent batches of one
 * process, or of several processes) lock them in the same order and never deadlock.
 * test/hot-path.test.ts checks that the library still sends the statement this mirrors.
 */
const BATCH_UPSERT = `
  insert into rate_limits as r (key, points, expire)
  select * from unnest($1::text[], $2::int[], $3::bigint[]) as u(key, points, expire)
  order by u.key
  on conflict (key) do update set
    points = case when r.expire <= $4 then excluded.points else r.points + excluded.points end,
    expire = case when r.expire <= $4 then excluded.expire else r.expire end
  returning key, points, expire`;

interface Upsert {
  key: string;
  points: number;
  expire: number | null;
  resolve: (result: { rows: { points: number; expire: number | null }[] }) => void;
  reject: (err: unknown) => void;
}

/** What RateLimiterPostgres (`storeType: "pool"`) needs of its store client. */
export interface CounterStore {
  query(query: { name?: string; text: string; values?: unknown[] }): Promise<unknown>;
}

/**
 * The store client of the Postgres rate limiters: every other statement goes to the pool as is;
 * the library's counting upserts asked for during one turn of the event loop, or while
 * `maxInFlight` batches are running, are sent together as one statement (at most one per key in a batch; a second one for the same key waits
 * for the next). Every request is still counted in Postgres before it runs, and the library still
 * makes every decision from the row it gets back; only the round trips are shared.
 */
export class BatchedCounterStore implements CounterStore {
  private waiting: Upsert[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly maxInFlight = 2,
  ) {}

  query(query: { name?: string; text: string; values?: unknown[] }): Promise<unknown> {
    if (query.name !== LIBRARY_UPSERT_NAME || query.values?.length !== 4) return this.pool.query(query);
    const [key, points, expire] = query.values as [string, number, number | null, number];
    return new Promise((resolve, reject) => {
      this.waiting.push({ key, points, expire, resolve, reject });
      if (!this.scheduled && this.inFlight < this.maxInFlight) {
        this.scheduled = true;
        setImmediate(() => this.send());
      }
    });
  }

  private send(): void {
    this.scheduled = false;
    if (this.waiting.length === 0) return;
    const batch = new Map<string, Upsert>();
    const later: Upsert[] = [];
    for (const upsert of this.waiting) {
      if (batch.has(upsert.key)) later.push(upsert);
      else batch.set(upsert.key, upsert);
    }
    this.waiting = later;
    this.inFlight += 1;
    const upserts = [...batch.values()];
    this.pool
      .query<{ key: string; points: number; expire: number | null }>({
        name: "svc-rate-limits-batch",
        text: BATCH_UPSERT,
        values: [
          upserts.map((u) => u.key),
          upserts.map((u) => u.points),
          upserts.map((u) => u.expire),
          Date.now(),
        ],
      })
      .then(
        ({ rows }) => {
          const byKey = new Map(rows.map((row) => [row.key, row]));
          for (const upsert of upserts) {
            const row = byKey.get(upsert.key);
            if (row) upsert.resolve({ rows: [{ points: row.points, expire: row.expire }] });
            else upsert.reject(new Error(`rate limit counter ${upsert.key} was not written`));
          }
        },
        (err: unknown) => {
          for (const upsert of upserts) upsert.reject(err);
        },
      )
      .finally(() => {
        this.inFlight -= 1;
        if (this.waiting.length > 0 && !this.scheduled) this.send();
      });
  }
}
