import { sql } from "kysely";
import type { Db } from "../../src/db/database.js";
import { recordDeliveredLeads } from "../../src/leads/versions.js";

/**
 * Holds an account's charge lock the way a concurrent charge holds it (`FOR NO KEY UPDATE` on the
 * account row) until `release` is called; resolves once the lock is taken.
 */
export async function holdChargeLock(db: Db, accountId: number): Promise<{ release(): Promise<void> }> {
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  let locked: () => void = () => {};
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const holder = db.transaction().execute(async (trx) => {
    await trx.selectFrom("accounts").select("id").where("id", "=", accountId).forNoKeyUpdate().execute();
    locked();
    await held;
  });
  await Promise.race([isLocked, holder]);
  return {
    async release() {
      release();
      await holder;
    },
  };
}

/**
 * Holds an account's lead export history entries of these leads the way a delivery that has not
 * committed yet holds them (recordDeliveredLeads, src/leads/versions.ts), until `commit` or
 * `rollback`; resolves once they are recorded. A concurrent delivery of the same leads to the
 * same account waits for it.
 */
export async function holdEntries(
  db: Db,
  accountId: number,
  leadIds: number[],
): Promise<{ commit(): Promise<void>; rollback(): Promise<void> }> {
  let end: (commit: boolean) => void = () => {};
  const ended = new Promise<boolean>((resolve) => (end = resolve));
  let recorded: () => void = () => {};
  const isRecorded = new Promise<void>((resolve) => (recorded = resolve));
  const rolledBack = new Error("rolled back on purpose");
  const holder = db
    .transaction()
    .execute(async (trx) => {
      await recordDeliveredLeads(trx, { accountId, method: "api", exportedAt: new Date(), leadIds });
      recorded();
      if (!(await ended)) throw rolledBack;
    })
    .catch((err: unknown) => {
      if (err !== rolledBack) throw err;
    });
  await Promise.race([isRecorded, holder]);
  return {
    async commit() {
      end(true);
      await holder;
    },
    async rollback() {
      end(false);
      await holder;
    },
  };
}

/** The sessions of the test database waiting for a lock; `chained`: only those whose blocker waits too. */
async function lockWaiters(db: Db, chained: boolean): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from pg_stat_activity w
    where w.datname = current_database() and w.wait_event_type = 'Lock'
      and (not ${chained} or exists (
        select 1 from pg_stat_activity b
        where b.pid = any(pg_blocking_pids(w.pid)) and b.wait_event_type = 'Lock'))`.execute(db);
  return rows[0]?.n ?? 0;
}

/**
 * Waits until at least `count` sessions wait for a lock (with `chained`: sessions whose blocker
 * waits for a lock itself, as a delivery waiting for the entries of one that waits for the
 * credit lock); throws after 4 seconds.
 */
export async function waitForLockWaiters(db: Db, count: number, chained = false): Promise<void> {
  for (let i = 0; i < 400; i += 1) {
    if ((await lockWaiters(db, chained)) >= count) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`fewer than ${count} sessions waited for a lock`);
}
