import { sql } from "kysely";
import { executePrepared, type Trx } from "../db/database.js";
import { isLockTimeout, setLockTimeout } from "../db/lock-timeout.js";
import { balanceSpentMeanwhile, CHARGE_LOCK_TIMEOUT_MS, chargeInProgress } from "./errors.js";
import { chargeCredits, lockAccountCredits, spendableTenths, type CreditLockOffer } from "./ledger.js";
import { noteBalanceAfterCharge } from "./low-balance.js";
import { costTenths, type NewItems } from "./price.js";

/**
 * How long a delivery step may wait for the locks of its entries (a concurrent delivery of the
 * same leads to the same account holds them until it commits):
 * - `bounded`: as long as a charge waits for the credit lock (2 s), then 429
 *   `charge_in_progress`; for a request the client waits on (`GET /leads`).
 * - `unbounded`: until the other delivery ends; for a background job (the export job), whose
 *   other delivery may be an export holding its entries while it writes its files
 *   (src/exports/job/run.ts): a 2 s bound would fail the job after its selection for a wait
 *   that ends by itself. The credit lock stays bounded by 2 s either way.
 */
export type EntryWait = "bounded" | "unbounded";

/** A delivery to charge: who pays, the ledger's words for it, and the delivery step. */
export interface DeliveryCharge {
  accountId: number;
  /** The ledger rows' reason (`lead_search`, `lead_export`). */
  reason: string;
  /** The ledger rows' reference (`search`, the job id). */
  reference?: string;
  entryWait: EntryWait;
  /**
   * Records the delivery in `trx` (lead export history entries through recordDeliveredLeads in
   * src/leads/versions.ts, whose unique key decides which leads are new) and answers how many of
   * each priced item were new: exactly those are charged. It may wait for other work that must
   * finish before the charge (the export's files); it must not take the account's credit lock,
   * except through `creditLock` (offered when waits are bounded): as the end of its last
   * statement, after its entries (creditLockAfter in ledger.ts).
   */
  deliver(trx: Trx, creditLock?: CreditLockOffer): Promise<NewItems>;
}

/** What a delivery was charged, and what the account can spend after it. */
export interface DeliveryCharged {
  /** The charge, in tenths of a credit (0 when nothing new was delivered). */
  tenths: number;
  /** The spendable balance after the charge, in tenths (spendableTenths). */
  remainingTenths: number;
}

/**
 * The one charging path of every way leads are delivered (search, export, and later push-lead,
 * schedules, enrichments): in the caller's transaction, which the caller commits with whatever
 * else the delivery writes (the export job's files and answer), it runs
 *
 *   1. the delivery step (`deliver`): entries recorded, how many items were new;
 *   2. the account's credit lock (lockAccountCredits), waited for at most 2 s;
 *   3. the charge of the new items at their price (price.ts) as ledger rows, monthly credits
 *      first (chargeCredits); 402 `insufficient_credits` when the balance no longer pays;
 *   4. the balance after, and `credit.low_balance` when it fell below the threshold (low-balance.ts).
 *
 * Lock order: entries first, credit lock last. Which leads are new is decided by the entries'
 * unique key (a concurrent delivery of the same lead waits there for the other to commit, then
 * finds the lead received), so the count has to come from step 1, and the charge has to be in the
 * same transaction: a lead is charged once, and never recorded without its charge or charged
 * without its entry. Taking the credit lock only after the entries means no transaction holds
 * that lock while it waits for entries: otherwise a delivery holding the credit lock could wait
 * for entries whose delivery waits for the credit lock (a deadlock), and one long delivery (an
 * export writing its files while holding its entries) would block every charge of the account,
 * even of other leads. Held from step 2 to the
 * commit, the credit lock covers a few statements, so concurrent charges of the account wait
 * briefly; past 2 s they answer 429 `charge_in_progress` (Retry-After 30). The lock is
 * `FOR NO KEY UPDATE` on the account row, which does not block the entries' foreign-key checks.
 *
 * Nothing is charged or recorded on 402 / 429: the error rolls the caller's transaction back.
 * The caller caps what it delivers at the spendable balance it read before (spendable.ts); the
 * 402 answers a concurrent charge of the same account that spent it meanwhile.
 */
export async function chargeDelivery(trx: Trx, charge: DeliveryCharge): Promise<DeliveryCharged> {
  let newItems: NewItems;
  const offer: CreditLockOffer | undefined =
    charge.entryWait === "bounded" ? { accountId: charge.accountId } : undefined;
  if (offer) {
    await setLockTimeout(trx, CHARGE_LOCK_TIMEOUT_MS);
    newItems = await inChargeTime(() => charge.deliver(trx, offer));
  } else {
    newItems = await charge.deliver(trx);
    await setLockTimeout(trx, CHARGE_LOCK_TIMEOUT_MS);
  }
  const { periodStart, lowBalanceNotified, autoTopUp } =
    offer?.taken ??
    (await inChargeTime(() => lockAccountCredits(trx, charge.accountId, { thenWaitUnbounded: true })));
  const tenths = costTenths(newItems);
  const after = await chargeCredits(trx, {
    accountId: charge.accountId,
    periodStart,
    tenths,
    reason: charge.reason,
    reference: charge.reference,
  });
  if (!after) throw balanceSpentMeanwhile();
  if (tenths > 0) await noteBalanceAfterCharge(trx, charge.accountId, after, lowBalanceNotified);
  if (tenths > 0 && autoTopUp) await claimAutoTopUp(trx, charge.accountId, after.permanentTenths);
  return { tenths, remainingTenths: spendableTenths(after) };
}

/** Runs a step under the charge's lock timeout: a lock it waited 2 s for is 429 charge_in_progress. */
async function inChargeTime<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (isLockTimeout(err)) throw chargeInProgress();
    throw err;
  }
}

/** The graphile-worker task that makes a claimed auto top-up purchase (src/billing/auto-top-up/). */
export const AUTO_TOP_UP_TASK = "billing__auto_top_up";

/**
 * Auto top-up (docs/billing.md): a charge that leaves the permanent credits below the account's
 * trigger claims one purchase (the settings row's `pending_id`, kept until the purchase is made
 * or refused) and queues it, in the charge's transaction, so it is queued only if the charge
 * commits. Charges of one account run one after another under the credit lock, so of two
 * concurrent charges crossing the trigger the first claims and the second finds it claimed. A row
 * held by the purchase being made (during the processor's call) is skipped, never waited for. A
 * claim older than an hour (its job gave up) may be queued again, with the same `pending_id`.
 * One statement on the settings row's key, run only when the credit lock found auto top-up on
 * (CreditLockHeld), so a charge of an account without it costs no extra round trip.
 */
async function claimAutoTopUp(trx: Trx, accountId: number, permanentTenths: number): Promise<void> {
  const claim = sql`
    with claimed as (
      update auto_top_up_settings s
      set pending_id = coalesce(s.pending_id, gen_random_uuid()), pending_since = now()
      where s.account_id = (
        select t.account_id from auto_top_up_settings t
        where t.account_id = ${accountId}::int and t.enabled
          and t.trigger_tenths > ${permanentTenths}::bigint
          and (t.pending_id is null or t.pending_since < now() - interval '1 hour')
          and (t.next_attempt_at is null or t.next_attempt_at <= now())
        for update skip locked)
      returning s.account_id)
    select graphile_worker.add_job(
      ${AUTO_TOP_UP_TASK}::text,
      json_build_object('accountId', claimed.account_id),
      max_attempts => 10,
      job_key => ${AUTO_TOP_UP_TASK}::text || ':' || claimed.account_id::text
    ) from claimed`;
  await executePrepared(trx, claim.compile(trx));
}
