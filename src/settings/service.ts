import { findAccount, findAccountForUpdate, setDatabase, type Account } from "../accounts/repository.js";
import type { Db, DbOrTrx } from "../db/database.js";
import { errors } from "../http/errors.js";
import { pauseSchedulesOutsideDatabase } from "./repository.js";

/** Days an account must wait between two database switches. */
export const SWITCH_COOLDOWN_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;

export const DATABASES = ["other", "home_improvement"] as const;
export type DatabaseId = (typeof DATABASES)[number];

/** The database settings of an account at `now`. */
export interface DatabaseSettings {
  currentDatabase: DatabaseId;
  canSwitch: boolean;
  daysRemaining: number;
  lastSwitchedAt: Date | null;
}

export function databaseSettings(account: Account, now: Date): DatabaseSettings {
  const switchedAt = account.databaseSwitchedAt;
  const allowedAt = switchedAt ? switchedAt.getTime() + SWITCH_COOLDOWN_DAYS * DAY_MS : 0;
  const waitMs = Math.max(0, allowedAt - now.getTime());
  return {
    currentDatabase: (DATABASES as readonly string[]).includes(account.smbType)
      ? (account.smbType as DatabaseId)
      : "other",
    canSwitch: waitMs === 0,
    daysRemaining: Math.ceil(waitMs / DAY_MS),
    lastSwitchedAt: switchedAt,
  };
}

export async function getDatabaseSettings(db: DbOrTrx, accountId: number): Promise<DatabaseSettings> {
  const account = await findAccount(db, accountId);
  if (!account) throw errors.notFound("Account not found.");
  return databaseSettings(account, new Date());
}

/**
 * Switches the account's database: a no-op when it is already in use; 409 `conflict` during the
 * cooldown; otherwise pauses the active schedules of the other database, in one transaction.
 */
export async function switchDatabase(
  db: Db,
  accountId: number,
  target: DatabaseId,
): Promise<{ settings: DatabaseSettings; pausedSchedules: number; message: string }> {
  return db.transaction().execute(async (trx) => {
    const account = await findAccountForUpdate(trx, accountId);
    if (!account) throw errors.notFound("Account not found.");
    const now = new Date();
    const current = databaseSettings(account, now);
    if (current.currentDatabase === target) {
      return {
        settings: current,
        pausedSchedules: 0,
        message: `The account already uses the ${target} database.`,
      };
    }
    if (!current.canSwitch) {
      throw errors.conflict(
        `The database can be switched once every ${SWITCH_COOLDOWN_DAYS} days; ${current.daysRemaining} day(s) remaining.`,
      );
    }
    await setDatabase(trx, accountId, target, now);
    const pausedSchedules = await pauseSchedulesOutsideDatabase(trx, accountId, target);
    const settings = databaseSettings({ ...account, smbType: target, databaseSwitchedAt: now }, now);
    return {
      settings,
      pausedSchedules,
      message: `Switched to the ${target} database; ${pausedSchedules} schedule(s) paused.`,
    };
  });
}
