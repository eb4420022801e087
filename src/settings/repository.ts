import type { DbOrTrx } from "../db/database.js";

/** Pauses the account's active schedules that belong to another database; returns how many. */
export async function pauseSchedulesOutsideDatabase(
  db: DbOrTrx,
  accountId: number,
  database: string,
): Promise<number> {
  const result = await db
    .updateTable("email_schedules")
    .set({ is_active: false, pause_reason: "user", updated_at: new Date() })
    .where("account_id", "=", accountId)
    .where("is_active", "=", true)
    .where("database_type", "<>", database)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
