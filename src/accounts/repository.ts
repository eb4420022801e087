import { sql, type Selectable } from "kysely";
import { ledgerSums, toBalance, type Balance } from "../credits/ledger.js";
import type { DbOrTrx } from "../db/database.js";
import type { AccountsTable } from "../db/schema/accounts.js";

/** An account as the services see it (domain shape, not a row). */
export interface Account {
  id: number;
  email: string;
  firstName: string | null;
  lastName: string | null;
  companyName: string | null;
  companyWebsite: string | null;
  smbType: string;
  plan: string | null;
  subscriptionStatus: string;
  freeLeadsUsed: number;
  onboardingCompleted: boolean;
  targetCategories: string[];
  targetLocations: string[];
  periodStart: Date;
  databaseSwitchedAt: Date | null;
}

function toAccount(row: Selectable<AccountsTable>): Account {
  return {
    id: row.id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    companyName: row.company_name,
    companyWebsite: row.company_website,
    smbType: row.smb_type,
    plan: row.plan,
    subscriptionStatus: row.subscription_status,
    freeLeadsUsed: row.free_leads_used,
    onboardingCompleted: row.onboarding_completed,
    targetCategories: row.target_categories,
    targetLocations: row.target_locations,
    periodStart: row.period_start,
    databaseSwitchedAt: row.database_switched_at,
  };
}

export async function findAccount(db: DbOrTrx, id: number): Promise<Account | undefined> {
  const row = await db.selectFrom("accounts").selectAll().where("id", "=", id).executeTakeFirst();
  return row && toAccount(row);
}

/** The account with its ledger sums, in one query (the sums come from a lateral subquery). */
export async function findAccountWithBalance(
  db: DbOrTrx,
  id: number,
): Promise<{ account: Account; balance: Balance } | undefined> {
  const row = await db
    .selectFrom("accounts")
    .innerJoinLateral(
      (eb) =>
        eb
          .selectFrom("credit_ledger")
          .select(ledgerSums(sql<Date>`accounts.period_start`))
          .whereRef("credit_ledger.account_id", "=", "accounts.id")
          .as("sums"),
      (join) => join.onTrue(),
    )
    .selectAll("accounts")
    .select(["sums.monthlyRemaining", "sums.monthlyUsed", "sums.permanent"])
    .where("accounts.id", "=", id)
    .executeTakeFirst();
  return row && { account: toAccount(row), balance: toBalance(row) };
}

/** Locks the account row for the rest of the transaction. */
export async function findAccountForUpdate(db: DbOrTrx, id: number): Promise<Account | undefined> {
  const row = await db.selectFrom("accounts").selectAll().where("id", "=", id).forUpdate().executeTakeFirst();
  return row && toAccount(row);
}

export async function insertAccount(
  db: DbOrTrx,
  account: { email: string; plan: string; subscriptionStatus: string; trialUsed: boolean },
): Promise<number> {
  const row = await db
    .insertInto("accounts")
    .values({
      email: account.email,
      plan: account.plan,
      subscription_status: account.subscriptionStatus,
      trial_used: account.trialUsed,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

/** The writable profile fields (others are never changed through the API). */
export interface ProfileChanges {
  firstName?: string;
  lastName?: string;
  companyName?: string;
  companyWebsite?: string;
}

export async function updateProfileFields(db: DbOrTrx, id: number, changes: ProfileChanges): Promise<void> {
  await db
    .updateTable("accounts")
    .set({
      ...(changes.firstName !== undefined && { first_name: changes.firstName }),
      ...(changes.lastName !== undefined && { last_name: changes.lastName }),
      ...(changes.companyName !== undefined && { company_name: changes.companyName }),
      ...(changes.companyWebsite !== undefined && { company_website: changes.companyWebsite }),
      updated_at: new Date(),
    })
    .where("id", "=", id)
    .execute();
}

export async function setDatabase(db: DbOrTrx, id: number, smbType: string, switchedAt: Date): Promise<void> {
  await db
    .updateTable("accounts")
    .set({ smb_type: smbType, database_switched_at: switchedAt, updated_at: switchedAt })
    .where("id", "=", id)
    .execute();
}
