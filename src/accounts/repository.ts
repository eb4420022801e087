import { sql, type CompiledQuery, type Selectable, type SelectQueryBuilder } from "kysely";
import { ledgerSums, toBalance, type Balance } from "../credits/ledger.js";
import { prepared, type Db, type DbOrTrx } from "../db/database.js";
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

/** The columns an Account is built from (explicit, so a new column never changes a prepared plan). */
const ACCOUNT_COLUMNS = [
  "accounts.id",
  "accounts.email",
  "accounts.first_name",
  "accounts.last_name",
  "accounts.company_name",
  "accounts.company_website",
  "accounts.smb_type",
  "accounts.plan",
  "accounts.subscription_status",
  "accounts.free_leads_used",
  "accounts.onboarding_completed",
  "accounts.target_categories",
  "accounts.target_locations",
  "accounts.period_start",
  "accounts.database_switched_at",
] as const;

type AccountColumns = Pick<
  Selectable<AccountsTable>,
  (typeof ACCOUNT_COLUMNS)[number] extends `accounts.${infer C extends keyof AccountsTable}` ? C : never
>;

function toAccount(row: AccountColumns): Account {
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
  const row = await db.selectFrom("accounts").select(ACCOUNT_COLUMNS).where("id", "=", id).executeTakeFirst();
  return row && toAccount(row);
}

function accountsWithBalanceQuery(db: Db, ids: number[]) {
  return db
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
    .select(ACCOUNT_COLUMNS)
    .select(["sums.monthlyRemaining", "sums.monthlyUsed", "sums.permanent", "sums.overage"])
    .where((eb) => eb("accounts.id", "=", eb.fn.any(eb.val(ids))));
}

type AccountWithBalanceRow =
  ReturnType<typeof accountsWithBalanceQuery> extends SelectQueryBuilder<never, never, infer O> ? O : never;

/** GET /me runs this on every request: built once, then a named prepared statement. */
let compiledAccountsWithBalance: CompiledQuery<AccountWithBalanceRow> | undefined;

async function readAccountsWithBalance(db: DbOrTrx, ids: number[]): Promise<AccountWithBalanceRow[]> {
  compiledAccountsWithBalance ??= prepared(accountsWithBalanceQuery(db, [0]).compile());
  const { rows } = await db.executeQuery<AccountWithBalanceRow>({
    ...compiledAccountsWithBalance,
    parameters: [ids],
  });
  return rows;
}

/** Reads waiting to be sent together: by account id, the requests that asked. */
type Waiting = Map<
  number,
  { resolve: (row: AccountWithBalanceRow | undefined) => void; reject: (err: unknown) => void }[]
>;

/**
 * Sends concurrent reads of the pool together: the reads asked for during one turn of the event
 * loop go in one query, and reads that arrive while `MAX_IN_FLIGHT` batches are running wait for
 * the next batch. A read never joins a batch already sent, so every answer is read after its
 * request arrived.
 */
class AccountReads {
  static readonly MAX_IN_FLIGHT = 2;
  private waiting: Waiting = new Map();
  private inFlight = 0;
  private scheduled = false;

  constructor(private readonly db: Db) {}

  read(id: number): Promise<AccountWithBalanceRow | undefined> {
    return new Promise((resolve, reject) => {
      const waiters = this.waiting.get(id);
      if (waiters) waiters.push({ resolve, reject });
      else this.waiting.set(id, [{ resolve, reject }]);
      if (!this.scheduled && this.inFlight < AccountReads.MAX_IN_FLIGHT) {
        this.scheduled = true;
        setImmediate(() => this.send());
      }
    });
  }

  private send(): void {
    this.scheduled = false;
    if (this.waiting.size === 0) return;
    const batch = this.waiting;
    this.waiting = new Map();
    this.inFlight += 1;
    readAccountsWithBalance(this.db, [...batch.keys()])
      .then(
        (rows) => {
          const byId = new Map(rows.map((row) => [row.id, row]));
          for (const [id, waiters] of batch) for (const w of waiters) w.resolve(byId.get(id));
        },
        (err: unknown) => {
          for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
        },
      )
      .finally(() => {
        this.inFlight -= 1;
        if (this.waiting.size > 0 && !this.scheduled) this.send();
      });
  }
}

const accountReads = new WeakMap<Db, AccountReads>();

/**
 * The account with its ledger sums, in one query (the sums come from a lateral subquery). Always
 * read fresh; on the pool, concurrent calls share round trips (see AccountReads).
 */
export async function findAccountWithBalance(
  db: DbOrTrx,
  id: number,
): Promise<{ account: Account; balance: Balance } | undefined> {
  let row: AccountWithBalanceRow | undefined;
  if (db.isTransaction) {
    row = (await readAccountsWithBalance(db, [id]))[0];
  } else {
    let reads = accountReads.get(db);
    if (!reads) accountReads.set(db, (reads = new AccountReads(db)));
    row = await reads.read(id);
  }
  return row && { account: toAccount(row), balance: toBalance(row) };
}

/** Locks the account row for the rest of the transaction. */
export async function findAccountForUpdate(db: DbOrTrx, id: number): Promise<Account | undefined> {
  const row = await db
    .selectFrom("accounts")
    .select(ACCOUNT_COLUMNS)
    .where("id", "=", id)
    .forUpdate()
    .executeTakeFirst();
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

/** The subscription side of an account, as billing reads and changes it. */
export interface SubscriptionState {
  accountId: number;
  email: string;
  plan: string | null;
  subscriptionStatus: string;
  trialUsed: boolean;
  periodStart: Date;
  periodEnd: Date | null;
}

/** The account of an e-mail address (case-insensitive, as the unique index), if any. */
export async function findSubscriptionByEmail(
  db: DbOrTrx,
  email: string,
): Promise<SubscriptionState | undefined> {
  return subscriptionQuery(db)
    .where(sql<string>`lower(email)`, "=", email.toLowerCase())
    .executeTakeFirst();
}

/** The subscription side of an account; `lock` takes the row lock for the rest of the transaction. */
export async function findSubscriptionState(
  db: DbOrTrx,
  accountId: number,
  lock = false,
): Promise<SubscriptionState | undefined> {
  const query = subscriptionQuery(db).where("id", "=", accountId);
  return (lock ? query.forNoKeyUpdate() : query).executeTakeFirst();
}

function subscriptionQuery(db: DbOrTrx) {
  return db
    .selectFrom("accounts")
    .select([
      "id as accountId",
      "email",
      "plan",
      "subscription_status as subscriptionStatus",
      "trial_used as trialUsed",
      "period_start as periodStart",
      "period_end as periodEnd",
    ]);
}

/** Sets the fields of the subscription given (plan, status, billing period, trial used). */
export async function setSubscriptionState(
  db: DbOrTrx,
  accountId: number,
  changes: {
    plan?: string;
    subscriptionStatus?: string;
    trialUsed?: boolean;
    periodStart?: Date;
    periodEnd?: Date | null;
  },
): Promise<void> {
  await db
    .updateTable("accounts")
    .set({
      ...(changes.plan !== undefined && { plan: changes.plan }),
      ...(changes.subscriptionStatus !== undefined && { subscription_status: changes.subscriptionStatus }),
      ...(changes.trialUsed !== undefined && { trial_used: changes.trialUsed }),
      ...(changes.periodStart !== undefined && { period_start: changes.periodStart }),
      ...(changes.periodEnd !== undefined && { period_end: changes.periodEnd }),
      updated_at: new Date(),
    })
    .where("id", "=", accountId)
    .execute();
}
