import { sql, type Expression } from "kysely";
import { executePrepared, type DbOrTrx, type Trx } from "../db/database.js";

/** Credits are stored in tenths (a live-fetched enrichment URL costs 0.1 credit). */
export const TENTHS = 10;

export const toTenths = (credits: number): number => Math.round(credits * TENTHS);
export const fromTenths = (tenths: number): number => tenths / TENTHS;

/** The balance of an account, computed from its ledger, in tenths of a credit. */
export interface Balance {
  /** Monthly credits available at the start of the current period plus grants in it. */
  monthlyTenths: number;
  /** Monthly credits spent since the current period started. */
  monthlyUsedTenths: number;
  /** Monthly credits left. */
  monthlyRemainingTenths: number;
  /** Purchased credits left. */
  permanentTenths: number;
  /**
   * Overage allowance left in the current billing period: the overage budget granted into the
   * `overage` bucket (src/billing/overage-ledger.ts) minus the overage used. Spendable, but not
   * credits: `totalCreditsRemaining` and the low-balance notice leave it out (creditTenths).
   */
  overageTenths: number;
}

/** The three ledger sums of an account, as select expressions over `credit_ledger`. */
export function ledgerSums(periodStart: Expression<Date> | Date) {
  return [
    sql<number>`coalesce(sum(credit_ledger.amount_tenths) filter (where credit_ledger.bucket = 'monthly'), 0)`.as(
      "monthlyRemaining",
    ),
    sql<number>`coalesce(-sum(credit_ledger.amount_tenths) filter (where credit_ledger.bucket = 'monthly' and credit_ledger.kind = 'charge' and credit_ledger.created_at >= ${periodStart}), 0)`.as(
      "monthlyUsed",
    ),
    sql<number>`coalesce(sum(credit_ledger.amount_tenths) filter (where credit_ledger.bucket = 'permanent'), 0)`.as(
      "permanent",
    ),
    sql<number>`coalesce(sum(credit_ledger.amount_tenths) filter (where credit_ledger.bucket = 'overage'), 0)`.as(
      "overage",
    ),
  ] as const;
}

/** Builds a Balance from the sums of ledgerSums. */
export function toBalance(sums: {
  monthlyRemaining: number;
  monthlyUsed: number;
  permanent: number;
  overage?: number;
}): Balance {
  const monthlyRemaining = Number(sums.monthlyRemaining);
  const monthlyUsed = Number(sums.monthlyUsed);
  return {
    monthlyTenths: Math.max(0, monthlyRemaining) + monthlyUsed,
    monthlyUsedTenths: monthlyUsed,
    monthlyRemainingTenths: Math.max(0, monthlyRemaining),
    permanentTenths: Math.max(0, Number(sums.permanent)),
    overageTenths: Math.max(0, Number(sums.overage ?? 0)),
  };
}

/** Sums the ledger of one account (one indexed query). */
export async function readBalance(db: DbOrTrx, accountId: number, periodStart: Date): Promise<Balance> {
  const row = await db
    .selectFrom("credit_ledger")
    .select(ledgerSums(periodStart))
    .where("account_id", "=", accountId)
    .executeTakeFirstOrThrow();
  return toBalance(row);
}

/**
 * Spendable credits in tenths: monthly remaining plus permanent. The one definition of what an
 * account can spend: the caps of deliveries (spendable.ts) and the charge (chargeCredits) both
 * use it, so an overage budget extends it here.
 */
export const spendableTenths = (balance: Balance): number => creditTenths(balance) + balance.overageTenths;

/** Credits left in tenths: monthly remaining plus permanent (`totalCreditsRemaining`), without overage. */
export const creditTenths = (balance: Balance): number =>
  balance.monthlyRemainingTenths + balance.permanentTenths;

/** Writes a grant (a positive ledger row). */
export async function grantCredits(
  db: DbOrTrx,
  grant: {
    accountId: number;
    bucket: "monthly" | "permanent" | "overage";
    tenths: number;
    reason: string;
    reference?: string;
  },
): Promise<void> {
  if (grant.tenths <= 0) return;
  await db
    .insertInto("credit_ledger")
    .values({
      account_id: grant.accountId,
      bucket: grant.bucket,
      kind: "grant",
      amount_tenths: grant.tenths,
      reason: grant.reason,
      reference: grant.reference ?? null,
    })
    .execute();
  await clearLowBalance(db, grant.accountId);
}

/**
 * The balance grew (a grant) or is back above the low-balance threshold: the next fall below it
 * sends `credit.low_balance` again (low-balance.ts).
 */
export async function clearLowBalance(db: DbOrTrx, accountId: number): Promise<void> {
  await db
    .updateTable("accounts")
    .set({ low_balance_notified: false })
    .where("id", "=", accountId)
    .where("low_balance_notified", "=", true)
    .execute();
}

/**
 * Locks the account's credit row so concurrent charges of the same account run one after the
 * other. Needs the transaction the charge is written in. `FOR NO KEY UPDATE` serialises charges
 * (they all take this lock) without blocking inserts whose foreign key points at the account
 * (jobs, history rows), which take the weaker KEY SHARE lock.
 */
export async function lockAccountCredits(
  trx: Trx,
  accountId: number,
  options: { thenWaitUnbounded?: boolean } = {},
): Promise<CreditLockHeld> {
  const lock = trx
    .with("locked", (db) =>
      db
        .selectFrom("accounts")
        .select(["period_start", "low_balance_notified"])
        .where("id", "=", accountId)
        .forNoKeyUpdate(),
    )
    .selectFrom("locked")
    .select(["period_start", "low_balance_notified"])
    .select(autoTopUpEnabled(accountId).as("auto_top_up"))
    // Evaluated on the locked row, so only once the lock is held (a wait still has the timeout).
    .$if(options.thenWaitUnbounded === true, (q) =>
      q.select(sql<string>`set_config('lock_timeout', '0', true)`.as("lock_timeout")),
    );
  const row = (await executePrepared(trx, lock.compile())).rows[0];
  if (!row) throw new Error(`account ${accountId} not found`);
  return {
    periodStart: row.period_start,
    lowBalanceNotified: row.low_balance_notified,
    autoTopUp: row.auto_top_up === true,
  };
}

/** What a charge learns when it takes the account's credit lock. */
export interface CreditLockHeld {
  periodStart: Date;
  lowBalanceNotified: boolean;
  /** The account has auto top-up on (src/billing/auto-top-up): a charge checks its trigger. */
  autoTopUp: boolean;
}

/** Whether the account has auto top-up on, read with the credit lock (so a charge without it skips the check). */
function autoTopUpEnabled(accountId: number) {
  return sql<boolean>`exists (select 1 from auto_top_up_settings t where t.account_id = ${accountId} and t.enabled)`;
}

/**
 * The account's credit lock offered to a delivery step (chargeDelivery, bounded waits only): the
 * step may take it as the last thing its last statement does, after its entries
 * (creditLockAfter), saving a round trip; chargeDelivery takes it itself when the step did not.
 */
export interface CreditLockOffer {
  accountId: number;
  /** What lockAccountCredits answers, once the step's statement took the lock. */
  taken?: CreditLockHeld;
}

/**
 * lockAccountCredits as the end of another statement: a CTE `credit_lock` that locks the account
 * row (`FOR NO KEY UPDATE`) only once the statement's CTE `after` has run to completion (its
 * count is a condition of the lock's scan, evaluated before it), and the select expressions that
 * read the locked row and end the lock timeout, as lockAccountCredits does with
 * `thenWaitUnbounded`. The statement reads them into the offer with creditLockTaken.
 */
export function creditLockAfter(offer: CreditLockOffer, after: string) {
  return {
    cte: sql`credit_lock as (
      select a.period_start, a.low_balance_notified from accounts a
      where a.id = ${offer.accountId} and (select count(*) from ${sql.table(after)}) >= 0
      for no key update)`,
    columns: sql`(select period_start from credit_lock) as credit_period_start,
      (select low_balance_notified from credit_lock) as credit_low_balance_notified,
      (select ${autoTopUpEnabled(offer.accountId)} from credit_lock) as credit_auto_top_up,
      (select set_config('lock_timeout', '0', true) from credit_lock) as credit_lock_timeout`,
  };
}

/** Records in the offer what a statement with creditLockAfter read (nothing when the row is gone). */
export function creditLockTaken(
  offer: CreditLockOffer,
  row:
    | {
        credit_period_start?: Date | null;
        credit_low_balance_notified?: boolean | null;
        credit_auto_top_up?: boolean | null;
      }
    | undefined,
): void {
  if (!row?.credit_period_start) return;
  offer.taken = {
    periodStart: row.credit_period_start,
    lowBalanceNotified: row.credit_low_balance_notified === true,
    autoTopUp: row.credit_auto_top_up === true,
  };
}

/**
 * Charges `tenths` in the caller's transaction (after lockAccountCredits): monthly credits first,
 * then permanent, then the overage allowance (usage past the credits, collected later in money
 * by src/billing). Returns the balance after the charge, or null, writing nothing, when the
 * balance cannot pay.
 *
 * One statement: the balance (ledgerSums, read as toBalance reads them), the split over the buckets, the rows, and the sums after them. It runs after the credit lock,
 * so its snapshot holds every charge committed before this one.
 */
export async function chargeCredits(
  trx: Trx,
  charge: { accountId: number; periodStart: Date; tenths: number; reason: string; reference?: string },
): Promise<Balance | null> {
  if (charge.tenths <= 0) return readBalance(trx, charge.accountId, charge.periodStart);
  const tenths = sql<number>`cast(${charge.tenths} as bigint)`;
  const statement = trx
    .with("sums", (db) =>
      db
        .selectFrom("credit_ledger")
        .where("account_id", "=", charge.accountId)
        .select(ledgerSums(charge.periodStart)),
    )
    // Each bucket as toBalance reads it: a negative sum counts as empty.
    .with(
      "available",
      () =>
        sql`(select greatest(s."monthlyRemaining", 0) as monthly, greatest(s.permanent, 0) as permanent,
        greatest(s.overage, 0) as overage from sums s)`,
    )
    // What each bucket pays: monthly first, then permanent, the rest from the overage allowance;
    // no row at all when the three cannot pay together.
    .with(
      "split",
      () =>
        sql`(
        select v.bucket, v.tenths
        from available a
        cross join lateral (select least(a.monthly, ${tenths}) as from_monthly) m
        cross join lateral (select least(a.permanent, ${tenths} - m.from_monthly) as from_permanent) p
        cross join lateral (values
          ('monthly', m.from_monthly),
          ('permanent', p.from_permanent),
          ('overage', ${tenths} - m.from_monthly - p.from_permanent)
        ) as v(bucket, tenths)
        where a.monthly + a.permanent + a.overage >= ${tenths} and v.tenths > 0
      )`,
    )
    .with("charged", (db) =>
      db
        .insertInto("credit_ledger")
        .columns(["account_id", "bucket", "kind", "amount_tenths", "reason", "reference"])
        .expression(
          db
            .selectFrom(sql<{ bucket: string; tenths: number }>`split`.as("split"))
            .select([
              sql<number>`cast(${charge.accountId} as integer)`.as("account_id"),
              sql<string>`split.bucket`.as("bucket"),
              sql<string>`'charge'`.as("kind"),
              sql<number>`-split.tenths`.as("amount_tenths"),
              sql<string>`cast(${charge.reason} as text)`.as("reason"),
              sql<string | null>`cast(${charge.reference ?? null} as text)`.as("reference"),
            ]),
        )
        .returning(LEDGER_SUM_COLUMNS),
    )
    // The sums after the charge: the ledger as this statement found it plus the rows it wrote
    // (which its own snapshot does not show).
    .selectFrom((db) =>
      db
        .selectFrom("credit_ledger")
        .select(LEDGER_SUM_COLUMNS)
        .where("account_id", "=", charge.accountId)
        .unionAll(db.selectFrom("charged").select(LEDGER_SUM_COLUMNS))
        .as("credit_ledger"),
    )
    .select([...ledgerSums(charge.periodStart), sql<number>`(select count(*) from charged)`.as("written")]);
  const row = (await executePrepared(trx, statement.compile())).rows[0]!;
  return Number(row.written) === 0 ? null : toBalance(row);
}

/** The columns the ledger sums read (ledgerSums). */
const LEDGER_SUM_COLUMNS = ["bucket", "kind", "amount_tenths", "created_at"] as const;

/**
 * Expires what is left of the given buckets (a forfeit when the subscription ends, a plan
 * downgrade at renewal, trial credits moved to the permanent bucket): one `expire` row per
 * bucket that holds credits, in the caller's transaction (after lockAccountCredits or another
 * lock of the account row). Returns the tenths expired per bucket.
 */
export async function expireCredits(
  trx: Trx,
  expiry: {
    accountId: number;
    buckets: readonly ("monthly" | "permanent" | "overage")[];
    reason: string;
    reference?: string;
  },
): Promise<{ monthly: number; permanent: number; overage: number }> {
  const sums = await trx
    .selectFrom("credit_ledger")
    .select([
      sql<string>`coalesce(sum(amount_tenths) filter (where bucket = 'monthly'), 0)`.as("monthly"),
      sql<string>`coalesce(sum(amount_tenths) filter (where bucket = 'permanent'), 0)`.as("permanent"),
      sql<string>`coalesce(sum(amount_tenths) filter (where bucket = 'overage'), 0)`.as("overage"),
    ])
    .where("account_id", "=", expiry.accountId)
    .executeTakeFirstOrThrow();
  const expired = { monthly: 0, permanent: 0, overage: 0 };
  for (const bucket of expiry.buckets) {
    const left = Number(sums[bucket]);
    if (left <= 0) continue;
    expired[bucket] = left;
    await trx
      .insertInto("credit_ledger")
      .values({
        account_id: expiry.accountId,
        bucket,
        kind: "expire",
        amount_tenths: -left,
        reason: expiry.reason,
        reference: expiry.reference ?? null,
      })
      .execute();
  }
  return expired;
}
