import { sql } from "kysely";
import { executePrepared, type Trx } from "./database.js";

/**
 * Makes every later lock wait of the transaction give up after `ms` (PostgreSQL error 55P03,
 * see isLockTimeout); 0 waits without bound again. Ends with the transaction.
 */
export async function setLockTimeout(trx: Trx, ms: number): Promise<void> {
  await executePrepared(
    trx,
    sql`select set_config('lock_timeout', ${`${Math.round(ms)}ms`}, true)`.compile(trx),
  );
}

/** Whether an error is PostgreSQL's "lock not available" (a lock_timeout ran out). */
export function isLockTimeout(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: string }).code === "55P03";
}
