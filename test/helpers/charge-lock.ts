import type { Db } from "../../src/db/database.js";

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
