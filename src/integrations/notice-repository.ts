import { sql } from "kysely";
import type { DbOrTrx, Trx } from "../db/database.js";

/** An owner notice that has not been mailed yet. */
export interface PendingNotice {
  id: number;
  summary: string;
  createdAt: Date;
}

/** The e-mail address of the account's owner (undefined for an unknown account). */
export async function ownerEmail(db: DbOrTrx, accountId: number): Promise<string | undefined> {
  const row = await db.selectFrom("accounts").select("email").where("id", "=", accountId).executeTakeFirst();
  return row?.email;
}

/** Serialises the notices of one account until the transaction ends (counting, then mailing). */
export async function lockAccountNotices(trx: Trx, accountId: number): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`integration-notices:${accountId}`}, 0))`.execute(
    trx,
  );
}

/** Stores a notice (not mailed yet); its id. */
export async function insertNotice(trx: Trx, accountId: number, summary: string): Promise<number> {
  const row = await trx
    .insertInto("integration_change_notices")
    .values({ account_id: accountId, summary })
    .returning("id")
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/** The account's notices of the last hour (mailed or not). */
export async function countRecentNotices(trx: Trx, accountId: number): Promise<number> {
  const row = await trx
    .selectFrom("integration_change_notices")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("account_id", "=", accountId)
    .where("created_at", ">", sql<Date>`now() - interval '1 hour'`)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The account's notices not mailed yet, oldest first. */
export async function pendingNotices(trx: Trx, accountId: number): Promise<PendingNotice[]> {
  const rows = await trx
    .selectFrom("integration_change_notices")
    .select(["id", "summary", "created_at"])
    .where("account_id", "=", accountId)
    .where("mailed_at", "is", null)
    .orderBy("id")
    .execute();
  return rows.map((r) => ({ id: Number(r.id), summary: r.summary, createdAt: r.created_at }));
}

/** Marks notices mailed. */
export async function markNoticesMailed(trx: Trx, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await trx
    .updateTable("integration_change_notices")
    .set({ mailed_at: sql<Date>`now()` })
    .where(sql<boolean>`id = any(${[...ids]}::bigint[])`)
    .execute();
}

/**
 * Queues the account's summary job (one pending job per account: a later notice does not move
 * it, so a burst gets one summary per delay).
 */
export async function queueSummaryJob(
  trx: Trx,
  task: string,
  accountId: number,
  delaySeconds: number,
): Promise<void> {
  await sql`select graphile_worker.add_job(
      ${task}::text,
      json_build_object('accountId', ${accountId}::integer),
      run_at => now() + make_interval(secs => ${delaySeconds}),
      max_attempts => 25,
      job_key => ${`${task}:${accountId}`}::text,
      job_key_mode => 'preserve_run_at'
    )`.execute(trx);
}
