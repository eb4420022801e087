import type { Db } from "../../db/database.js";
import type { LeadImportRow } from "./record.js";
import { upsertLeadRows } from "./repository.js";

interface InFlight {
  ids: ReadonlySet<string>;
  done: Promise<void>;
}

/**
 * Collects rows into batches and writes up to `concurrency` batches at a time, each one statement
 * on its own pooled connection (each batch commits on its own). Order is kept where it matters:
 * a later row with the same external id replaces an earlier one of the same batch, and a batch
 * that shares an id with a batch still being written waits for it, so the later line wins.
 */
export class BatchWriter {
  inserted = 0;
  updated = 0;
  /** Existing leads whose data the written batches changed (queued for live updates). */
  changed = 0;
  private batch: LeadImportRow[] = [];
  private batchIds = new Map<string, number>();
  private readonly inFlight = new Set<InFlight>();
  private failure: { error: unknown } | undefined;

  constructor(
    private readonly db: Db,
    private readonly batchSize: number,
    private readonly concurrency: number,
  ) {}

  /** Adds one row; resolves once it is buffered (waiting while the writers are all busy). */
  async add(row: LeadImportRow): Promise<void> {
    const id = row.external_id;
    if (id !== null) {
      const at = this.batchIds.get(id);
      if (at !== undefined) {
        // Same lead twice in one batch: the later line replaces the earlier, which was written
        // first in effect, so this line counts as an update.
        this.batch[at] = row;
        this.updated += 1;
        return;
      }
      this.batchIds.set(id, this.batch.length);
    }
    this.batch.push(row);
    if (this.batch.length >= this.batchSize) await this.flush();
  }

  /** Writes what is buffered and waits for every batch; throws the first write failure. */
  async close(): Promise<void> {
    await this.flush();
    await Promise.all([...this.inFlight].map((f) => f.done));
    this.throwIfFailed();
  }

  /** Waits for the batches being written, without throwing (after a failure elsewhere). */
  async settle(): Promise<void> {
    await Promise.all([...this.inFlight].map((f) => f.done));
  }

  private throwIfFailed(): void {
    if (this.failure) {
      const written = this.inserted + this.updated;
      const reason =
        this.failure.error instanceof Error ? this.failure.error.message : String(this.failure.error);
      throw new Error(`import stopped after ${written} leads were written: ${reason}`);
    }
  }

  private async flush(): Promise<void> {
    const rows = this.batch;
    const ids = new Set(this.batchIds.keys());
    this.batch = [];
    this.batchIds = new Map();
    if (rows.length === 0) return;
    for (;;) {
      this.throwIfFailed();
      const blocking = [...this.inFlight].filter((f) => sharesAny(f.ids, ids));
      if (blocking.length > 0) {
        await Promise.all(blocking.map((f) => f.done));
        continue;
      }
      if (this.inFlight.size < this.concurrency) break;
      await Promise.race([...this.inFlight].map((f) => f.done));
    }
    const entry: InFlight = { ids, done: Promise.resolve() };
    entry.done = upsertLeadRows(this.db, rows)
      .then(
        (r) => {
          this.inserted += r.inserted;
          this.updated += r.updated;
          this.changed += r.changed;
        },
        (error: unknown) => {
          this.failure ??= { error };
        },
      )
      .finally(() => {
        this.inFlight.delete(entry);
      });
    this.inFlight.add(entry);
  }
}

function sharesAny(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size === 0 || b.size === 0) return false;
  const [small, large] = a.size < b.size ? [a, b] : [b, a];
  for (const id of small) if (large.has(id)) return true;
  return false;
}
