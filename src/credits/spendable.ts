import { spendableTenths, type Balance } from "./ledger.js";
import { PRICE_TENTHS } from "./price.js";

/** What an account can spend now. */
export interface Spendable {
  /** In tenths of a credit. */
  tenths: number;
  /** In whole new leads: the cap of a search or an export (src/leads/search, src/exports/job). */
  leads: number;
}

/**
 * What an account can spend now, from its balance (read with the account, see
 * findAccountWithBalance in src/accounts/repository.ts). The amount is spendableTenths, the one
 * definition the charge checks too (chargeCredits), so a cap computed here and the charge agree;
 * an overage budget extends it there.
 */
export function spendable(balance: Balance): Spendable {
  const tenths = spendableTenths(balance);
  return { tenths, leads: Math.floor(tenths / PRICE_TENTHS.lead) };
}
