import type { Trx } from "../db/database.js";
import { emitEvent } from "../events/outbox.js";
import { clearLowBalance, creditTenths, fromTenths, TENTHS, type Balance } from "./ledger.js";

/**
 * `credit.low_balance` is sent when a charge leaves fewer than 100 spendable credits
 * (docs/events.md): a fixed amount a customer can act on whatever the plan, about a day of a
 * small plan's use.
 */
export const LOW_BALANCE_THRESHOLD = 100;

/**
 * After a charge (in its transaction, under the account's credit lock): the first charge that
 * leaves the balance below the threshold sends `credit.low_balance` once; the flag
 * `accounts.low_balance_notified` remembers it until the balance is back at or above the
 * threshold (a later charge or a grant clears it), so each crossing sends one event.
 */
export async function noteBalanceAfterCharge(
  trx: Trx,
  accountId: number,
  after: Balance,
  /** The account's `low_balance_notified`, read under the credit lock (lockAccountCredits). */
  notified: boolean,
): Promise<void> {
  const remaining = creditTenths(after);
  if (remaining >= LOW_BALANCE_THRESHOLD * TENTHS) {
    if (notified) await clearLowBalance(trx, accountId);
    return;
  }
  if (notified) return;
  const crossed = await trx
    .updateTable("accounts")
    .set({ low_balance_notified: true })
    .where("id", "=", accountId)
    .where("low_balance_notified", "=", false)
    .returning("id")
    .executeTakeFirst();
  if (!crossed) return;
  await emitEvent(trx, {
    accountId,
    type: "credit.low_balance",
    data: {
      totalCreditsRemaining: fromTenths(remaining),
      threshold: LOW_BALANCE_THRESHOLD,
      monthlyCreditsRemaining: fromTenths(after.monthlyRemainingTenths),
      permanentCredits: fromTenths(after.permanentTenths),
    },
  });
}
