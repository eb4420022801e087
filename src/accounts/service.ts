import { createApiKey } from "../auth/service.js";
import { grantCredits, toTenths, type Balance } from "../credits/ledger.js";
import type { Db, DbOrTrx } from "../db/database.js";
import { errors } from "../http/errors.js";
import { isPlanId, monthlyGrant } from "./plans.js";
import {
  findAccountWithBalance,
  insertAccount,
  updateProfileFields,
  type Account,
  type ProfileChanges,
} from "./repository.js";

/** An account with its computed balance. */
export interface AccountWithBalance {
  account: Account;
  balance: Balance;
}

/** The account and its ledger balance, read in one query. */
export async function getAccountWithBalance(db: DbOrTrx, accountId: number): Promise<AccountWithBalance> {
  const found = await findAccountWithBalance(db, accountId);
  if (!found) throw errors.notFound("Account not found.");
  return found;
}

const WRITABLE = ["firstName", "lastName", "companyName", "companyWebsite"] as const;

/** Applies the writable profile fields of a request body; 400 bad_request when none is given. */
export async function updateProfile(
  db: DbOrTrx,
  accountId: number,
  body: Record<string, unknown>,
): Promise<void> {
  const changes: ProfileChanges = {};
  for (const field of WRITABLE) {
    const value = body[field];
    if (typeof value === "string") changes[field] = value.trim();
  }
  if (Object.keys(changes).length === 0) {
    throw errors.badRequest(`Send at least one of: ${WRITABLE.join(", ")}.`);
  }
  await updateProfileFields(db, accountId, changes);
}

/** Options of the admin CLI's create-account. */
export interface NewAccount {
  email: string;
  plan: string;
  status?: "active" | "trialing" | "canceled";
  monthlyCredits?: number;
  permanentCredits?: number;
}

/** Creates an account with its first API key and its opening credit grants, in one transaction. */
export async function createAccountWithKey(
  db: Db,
  input: NewAccount,
): Promise<{ accountId: number; apiKey: string }> {
  if (!isPlanId(input.plan)) throw errors.validation(`Unknown plan: ${input.plan}`);
  const plan = input.plan;
  const status = input.status ?? "active";
  const monthly = input.monthlyCredits ?? monthlyGrant(plan, status === "trialing");
  return db.transaction().execute(async (trx) => {
    const accountId = await insertAccount(trx, {
      email: input.email,
      plan,
      subscriptionStatus: status,
      trialUsed: status === "trialing",
    });
    await grantCredits(trx, {
      accountId,
      bucket: "monthly",
      tenths: toTenths(monthly),
      reason: "plan_grant",
    });
    await grantCredits(trx, {
      accountId,
      bucket: "permanent",
      tenths: toTenths(input.permanentCredits ?? 0),
      reason: "admin_grant",
    });
    const { apiKey } = await createApiKey(trx, accountId, "Default key");
    return { accountId, apiKey };
  });
}
