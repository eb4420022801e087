import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { executePrepared, type Db } from "../../db/database.js";
import { ApiError } from "../../http/errors.js";

/** Lead queries (search and preview) one account may run at once, over every process. */
export const LEAD_QUERY_CAPACITY = 10;
/** Seconds a client is told to wait when the capacity is used up. */
export const LEAD_QUERY_RETRY_AFTER = 10;
/**
 * A slot frees itself after this long even if its process died without releasing it; longer
 * than a lead query may run (the search's statement timeout).
 */
export const SLOT_LIFETIME_MS = 3 * 60_000;

/** 429 `lead_query_capacity_busy` with Retry-After 10. */
export function leadQueryCapacityBusy(): ApiError {
  return new ApiError(
    429,
    "lead_query_capacity_busy",
    `This account already runs ${LEAD_QUERY_CAPACITY} lead queries at once; retry in ${LEAD_QUERY_RETRY_AFTER} seconds.`,
    undefined,
    { "Retry-After": String(LEAD_QUERY_RETRY_AFTER) },
  );
}

/** Claims a free (or expired) slot row of the account in one statement; null when none is free. */
async function claimSlot(db: Db, accountId: number, token: string): Promise<boolean> {
  const claim = db
    .updateTable("lead_query_slots")
    .set({
      token,
      expires_at: sql<Date>`now() + ${`${SLOT_LIFETIME_MS} milliseconds`}::interval`,
    })
    .where(({ eb, refTuple, selectFrom }) =>
      eb(
        refTuple("account_id", "slot"),
        "=",
        selectFrom("lead_query_slots as s")
          .select(["s.account_id", "s.slot"])
          .where("s.account_id", "=", accountId)
          .where((w) => w.or([w("s.token", "is", null), w("s.expires_at", "<=", sql<Date>`now()`)]))
          .orderBy("s.slot")
          .limit(1)
          .forUpdate()
          .skipLocked()
          .$asTuple("account_id", "slot"),
      ),
    )
    .returning("slot");
  const { rows } = await executePrepared(db, claim.compile());
  return rows.length > 0;
}

/**
 * Takes one of the account's lead query slots, or returns null when all are taken. Each account
 * has 10 slot rows in PostgreSQL (created on its first query), shared by every process; a slot is
 * claimed with one `UPDATE ... FOR UPDATE SKIP LOCKED`, so two processes never claim the same one.
 */
export async function acquireLeadQuerySlot(db: Db, accountId: number): Promise<string | null> {
  const token = randomUUID();
  if (await claimSlot(db, accountId, token)) return token;
  // First query of the account (or its rows were lost in a crash: the table is unlogged).
  const { rows } = await sql<{ n: number }>`
    insert into lead_query_slots (account_id, slot)
    select ${accountId}, s from generate_series(1, ${LEAD_QUERY_CAPACITY}) s
    on conflict do nothing`.execute(db);
  void rows;
  return (await claimSlot(db, accountId, token)) ? token : null;
}

/** Gives a slot back. */
export async function releaseLeadQuerySlot(db: Db, token: string): Promise<void> {
  const release = db
    .updateTable("lead_query_slots")
    .set({ token: null, expires_at: null })
    .where("token", "=", token);
  await executePrepared(db, release.compile());
}

/**
 * Runs `work` inside one of the account's lead query slots: 429 `lead_query_capacity_busy`
 * (Retry-After 10) when the account already runs 10; the slot is given back afterwards, also
 * when `work` fails. The release is not awaited, so the answer goes out while the slot is given
 * back (no extra round trip before it); a release that fails leaves the slot to free itself
 * after SLOT_LIFETIME_MS.
 */
export async function withLeadQuerySlot<T>(db: Db, accountId: number, work: () => Promise<T>): Promise<T> {
  return withLeadQuerySlotReading(db, accountId, async () => undefined, work);
}

/**
 * withLeadQuerySlot whose `work` needs a read that holds nothing (the account's balance): the
 * read runs on another connection while the slot is claimed, saving a round trip, and `work` gets
 * its result. When no slot is free the read's result (or failure) is dropped.
 */
export async function withLeadQuerySlotReading<R, T>(
  db: Db,
  accountId: number,
  read: () => Promise<R>,
  work: (read: R) => Promise<T>,
): Promise<T> {
  const reading = read();
  reading.catch(() => undefined);
  const token = await acquireLeadQuerySlot(db, accountId);
  if (token === null) throw leadQueryCapacityBusy();
  try {
    return await work(await reading);
  } finally {
    // After the caller's answer is written (it is, in the microtasks before this callback), so
    // the release's round trip does not compete with it for the CPU.
    setImmediate(() => releaseLeadQuerySlot(db, token).catch(() => undefined));
  }
}
