import { sql } from "kysely";
import type { DbOrTrx, Trx } from "../../db/database.js";
import type { AutoTopUpConfig, AutoTopUpUnit, CycleUsage, UnitAmount } from "./amounts.js";

/** An account's auto top-up as stored (domain shape, not a row). */
export interface AutoTopUpSettings {
  enabled: boolean;
  /** The configuration; null when it was cleared (or never set). */
  config: AutoTopUpConfig | null;
  /** The purchase a charge claimed and that is not made yet (also the processor's idempotency key). */
  pendingId: string | null;
  consecutiveFailures: number;
  disabledReason: "payment_declined" | null;
}

const COLUMNS = [
  "enabled",
  "trigger_type",
  "trigger_amount",
  "purchase_type",
  "purchase_amount",
  "cap_type",
  "cap_amount",
  "pending_id",
  "consecutive_failures",
  "disabled_reason",
] as const;

interface SettingsRow {
  enabled: boolean;
  trigger_type: string | null;
  trigger_amount: string | null;
  purchase_type: string | null;
  purchase_amount: string | null;
  cap_type: string | null;
  cap_amount: string | null;
  pending_id: string | null;
  consecutive_failures: number;
  disabled_reason: string | null;
}

const unitAmount = (type: string | null, amount: string | null): UnitAmount | null =>
  (type === "credits" || type === "dollars") && amount !== null
    ? { type: type as AutoTopUpUnit, amount: Number(amount) }
    : null;

function toSettings(row: SettingsRow): AutoTopUpSettings {
  const trigger = unitAmount(row.trigger_type, row.trigger_amount);
  const purchase = unitAmount(row.purchase_type, row.purchase_amount);
  return {
    enabled: row.enabled,
    config: trigger && purchase ? { trigger, purchase, cap: unitAmount(row.cap_type, row.cap_amount) } : null,
    pendingId: row.pending_id,
    consecutiveFailures: row.consecutive_failures,
    disabledReason: row.disabled_reason === "payment_declined" ? "payment_declined" : null,
  };
}

export async function findSettings(db: DbOrTrx, accountId: number): Promise<AutoTopUpSettings | undefined> {
  const row = await db
    .selectFrom("auto_top_up_settings")
    .select(COLUMNS)
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  return row && toSettings(row);
}

/**
 * Locks the account's settings row for the transaction: one purchase of an account at a time, and
 * a PATCH waits for the purchase being made. A charge never waits for it (it skips a locked row).
 */
export async function lockSettings(trx: Trx, accountId: number): Promise<AutoTopUpSettings | undefined> {
  const row = await trx
    .selectFrom("auto_top_up_settings")
    .select(COLUMNS)
    .where("account_id", "=", accountId)
    .forUpdate()
    .executeTakeFirst();
  return row && toSettings(row);
}

/**
 * Replaces the configuration (PATCH): enabled, the trigger in tenths as charges compare it, and a
 * fresh start: no claimed purchase, no wait, no declines counted.
 */
export async function saveConfig(
  db: DbOrTrx,
  accountId: number,
  config: AutoTopUpConfig,
  triggerTenths: number,
): Promise<void> {
  const values = {
    enabled: true,
    trigger_type: config.trigger.type,
    trigger_amount: config.trigger.amount,
    trigger_tenths: triggerTenths,
    purchase_type: config.purchase.type,
    purchase_amount: config.purchase.amount,
    cap_type: config.cap?.type ?? null,
    cap_amount: config.cap?.amount ?? null,
    pending_id: null,
    pending_since: null,
    next_attempt_at: null,
    consecutive_failures: 0,
    disabled_reason: null,
  };
  await db
    .insertInto("auto_top_up_settings")
    .values({ account_id: accountId, ...values })
    .onConflict((oc) => oc.column("account_id").doUpdateSet({ ...values, updated_at: new Date() }))
    .execute();
}

/** Turns the auto top-up off and clears its configuration (`{enabled: false}`). */
export async function clearConfig(db: DbOrTrx, accountId: number): Promise<void> {
  await db
    .updateTable("auto_top_up_settings")
    .set({
      enabled: false,
      trigger_type: null,
      trigger_amount: null,
      trigger_tenths: null,
      purchase_type: null,
      purchase_amount: null,
      cap_type: null,
      cap_amount: null,
      pending_id: null,
      pending_since: null,
      next_attempt_at: null,
      consecutive_failures: 0,
      disabled_reason: null,
      updated_at: new Date(),
    })
    .where("account_id", "=", accountId)
    .execute();
}

/**
 * Ends the claimed purchase (made, refused or not needed): the next charge below the trigger
 * claims again, not before `nextAttemptAt` when given.
 */
export async function releaseClaim(
  trx: Trx,
  accountId: number,
  changes: { nextAttemptAt?: Date | null; consecutiveFailures?: number } = {},
): Promise<void> {
  await trx
    .updateTable("auto_top_up_settings")
    .set({
      pending_id: null,
      pending_since: null,
      ...(changes.nextAttemptAt !== undefined && { next_attempt_at: changes.nextAttemptAt }),
      ...(changes.consecutiveFailures !== undefined && { consecutive_failures: changes.consecutiveFailures }),
      updated_at: new Date(),
    })
    .where("account_id", "=", accountId)
    .execute();
}

/** Turns the auto top-up off after declines; the configuration stays visible in GET. */
export async function disableAfterDeclines(trx: Trx, accountId: number, failures: number): Promise<void> {
  await trx
    .updateTable("auto_top_up_settings")
    .set({
      enabled: false,
      pending_id: null,
      pending_since: null,
      next_attempt_at: null,
      consecutive_failures: failures,
      disabled_reason: "payment_declined",
      updated_at: new Date(),
    })
    .where("account_id", "=", accountId)
    .execute();
}

/** The paid purchases of the billing cycle that started at `periodStart`. */
export async function cycleUsage(db: DbOrTrx, accountId: number, periodStart: Date): Promise<CycleUsage> {
  const row = await db
    .selectFrom("auto_top_up_purchases")
    .select([
      sql<string>`count(*)`.as("purchases"),
      sql<string>`coalesce(sum(credits), 0)`.as("credits"),
      sql<string>`coalesce(sum(amount_cents), 0)`.as("amountCents"),
    ])
    .where("account_id", "=", accountId)
    .where("status", "=", "succeeded")
    .where("period_start", ">=", periodStart)
    .executeTakeFirstOrThrow();
  return {
    purchases: Number(row.purchases),
    credits: Number(row.credits),
    amountCents: Number(row.amountCents),
  };
}

/** Records one attempt (paid or declined) in its billing cycle. */
export async function insertPurchase(
  trx: Trx,
  purchase: {
    accountId: number;
    periodStart: Date;
    pendingId: string;
    credits: number;
    amountCents: number;
    status: "succeeded" | "declined";
    paymentIntentId: string | null;
  },
): Promise<void> {
  await trx
    .insertInto("auto_top_up_purchases")
    .values({
      account_id: purchase.accountId,
      period_start: purchase.periodStart,
      pending_id: purchase.pendingId,
      credits: purchase.credits,
      amount_cents: purchase.amountCents,
      status: purchase.status,
      payment_intent_id: purchase.paymentIntentId,
    })
    .execute();
}
