import { sql } from "kysely";
import type { DbOrTrx, Trx } from "../db/database.js";

/** An account's link to the payment processor (domain shape, not a row). */
export interface BillingCustomer {
  accountId: number;
  customerId: string;
  subscriptionId: string | null;
  paymentMethodId: string | null;
  cancelAtPeriodEnd: boolean;
  pendingPlan: string | null;
  overageBudgetType: "dollars" | "credits" | null;
  overageBudgetAmount: number | null;
  overageFailures: number;
}

const CUSTOMER_COLUMNS = [
  "account_id as accountId",
  "customer_id as customerId",
  "subscription_id as subscriptionId",
  "payment_method_id as paymentMethodId",
  "cancel_at_period_end as cancelAtPeriodEnd",
  "pending_plan as pendingPlan",
  "overage_budget_type as overageBudgetType",
  "overage_budget_amount as overageBudgetAmount",
  "overage_failures as overageFailures",
] as const;

type CustomerRow = Omit<BillingCustomer, "overageBudgetType"> & { overageBudgetType: string | null };

const toCustomer = (row: CustomerRow): BillingCustomer => ({
  ...row,
  overageBudgetType:
    row.overageBudgetType === "dollars" || row.overageBudgetType === "credits" ? row.overageBudgetType : null,
});

export async function findCustomer(db: DbOrTrx, accountId: number): Promise<BillingCustomer | undefined> {
  const row = await db
    .selectFrom("billing_customers")
    .select(CUSTOMER_COLUMNS)
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  return row && toCustomer(row);
}

export async function findCustomerBySubscription(
  db: DbOrTrx,
  subscriptionId: string,
): Promise<BillingCustomer | undefined> {
  const row = await db
    .selectFrom("billing_customers")
    .select(CUSTOMER_COLUMNS)
    .where("subscription_id", "=", subscriptionId)
    .executeTakeFirst();
  return row && toCustomer(row);
}

/** Links an account to its processor customer and subscription (a new purchase replaces the link). */
export async function upsertCustomer(
  db: DbOrTrx,
  customer: { accountId: number; customerId: string; subscriptionId: string; paymentMethodId: string | null },
): Promise<void> {
  await db
    .insertInto("billing_customers")
    .values({
      account_id: customer.accountId,
      customer_id: customer.customerId,
      subscription_id: customer.subscriptionId,
      payment_method_id: customer.paymentMethodId,
    })
    .onConflict((oc) =>
      oc.column("account_id").doUpdateSet({
        customer_id: customer.customerId,
        subscription_id: customer.subscriptionId,
        payment_method_id: customer.paymentMethodId,
        cancel_at_period_end: false,
        pending_plan: null,
        overage_budget_type: null,
        overage_budget_amount: null,
        overage_failures: 0,
        updated_at: new Date(),
      }),
    )
    .execute();
}

export async function updateCustomer(
  db: DbOrTrx,
  accountId: number,
  changes: {
    paymentMethodId?: string | null;
    cancelAtPeriodEnd?: boolean;
    pendingPlan?: string | null;
    overageBudgetType?: string | null;
    overageBudgetAmount?: number | null;
    overageFailures?: number;
  },
): Promise<void> {
  await db
    .updateTable("billing_customers")
    .set({
      ...(changes.paymentMethodId !== undefined && { payment_method_id: changes.paymentMethodId }),
      ...(changes.cancelAtPeriodEnd !== undefined && { cancel_at_period_end: changes.cancelAtPeriodEnd }),
      ...(changes.pendingPlan !== undefined && { pending_plan: changes.pendingPlan }),
      ...(changes.overageBudgetType !== undefined && { overage_budget_type: changes.overageBudgetType }),
      ...(changes.overageBudgetAmount !== undefined && {
        overage_budget_amount: changes.overageBudgetAmount,
      }),
      ...(changes.overageFailures !== undefined && { overage_failures: changes.overageFailures }),
      updated_at: new Date(),
    })
    .where("account_id", "=", accountId)
    .execute();
}

// --- checkouts ------------------------------------------------------------------------------

export interface Checkout {
  id: string;
  email: string;
  plan: string;
  trial: boolean;
  accountId: number | null;
  sessionId: string | null;
  status: string;
}

export async function insertCheckout(
  db: DbOrTrx,
  checkout: { email: string; plan: string; trial: boolean; accountId: number | null; expiresAt: Date },
): Promise<string> {
  const row = await db
    .insertInto("billing_checkouts")
    .values({
      email: checkout.email,
      plan: checkout.plan,
      trial: checkout.trial,
      account_id: checkout.accountId,
      expires_at: checkout.expiresAt,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function setCheckoutSession(
  db: DbOrTrx,
  id: string,
  sessionId: string,
  url: string,
): Promise<void> {
  await db
    .updateTable("billing_checkouts")
    .set({ session_id: sessionId, checkout_url: url })
    .where("id", "=", id)
    .execute();
}

/** The checkout of a session: by our id carried in the session's metadata, else by session id. */
export async function findCheckout(
  db: DbOrTrx,
  ref: { checkoutId: string | null; sessionId: string },
): Promise<Checkout | undefined> {
  const isUuid = ref.checkoutId !== null && /^[0-9a-f-]{36}$/i.test(ref.checkoutId);
  return db
    .selectFrom("billing_checkouts")
    .select(["id", "email", "plan", "trial", "account_id as accountId", "session_id as sessionId", "status"])
    .where((eb) =>
      isUuid
        ? eb.or([eb("id", "=", ref.checkoutId!), eb("session_id", "=", ref.sessionId)])
        : eb("session_id", "=", ref.sessionId),
    )
    .executeTakeFirst();
}

export async function completeCheckout(db: DbOrTrx, id: string): Promise<void> {
  await db.updateTable("billing_checkouts").set({ status: "completed" }).where("id", "=", id).execute();
}

// --- trials ---------------------------------------------------------------------------------

export async function trialUsed(db: DbOrTrx, emailKey: string): Promise<boolean> {
  const row = await db
    .selectFrom("billing_trials")
    .select("email_key")
    .where("email_key", "=", emailKey)
    .executeTakeFirst();
  return row !== undefined;
}

export async function recordTrial(db: DbOrTrx, emailKey: string, accountId: number): Promise<void> {
  await db
    .insertInto("billing_trials")
    .values({ email_key: emailKey, account_id: accountId })
    .onConflict((oc) => oc.column("email_key").doNothing())
    .execute();
}

// --- processor events -----------------------------------------------------------------------

/**
 * Records a processor event as seen, in the transaction that applies it: false when it was
 * already recorded (a concurrent delivery of the same event waits here for the first to commit,
 * then finds it), so each event is applied once.
 */
export async function recordEvent(
  trx: Trx,
  event: { id: string; type: string; subscriptionId: string | null; created: Date },
  status: "processed" | "deferred" | "ignored",
  payload?: unknown,
): Promise<boolean> {
  const row = await trx
    .insertInto("billing_events")
    .values({
      event_id: event.id,
      event_type: event.type,
      subscription_id: event.subscriptionId,
      status,
      payload: payload === undefined ? null : JSON.stringify(payload),
      event_created_at: event.created,
    })
    .onConflict((oc) => oc.column("event_id").doNothing())
    .returning("event_id")
    .executeTakeFirst();
  return row !== undefined;
}

export async function eventSeen(db: DbOrTrx, eventId: string): Promise<boolean> {
  const row = await db
    .selectFrom("billing_events")
    .select("event_id")
    .where("event_id", "=", eventId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Events that waited for their subscription to be known, oldest first; marked processed. */
export async function takeDeferredEvents(
  trx: Trx,
  subscriptionId: string,
): Promise<{ id: string; type: string; created: Date; payload: unknown }[]> {
  return trx
    .updateTable("billing_events")
    .set({ status: "processed" })
    .where("subscription_id", "=", subscriptionId)
    .where("status", "=", "deferred")
    .returning(["event_id as id", "event_type as type", "event_created_at as created", "payload"])
    .execute()
    .then((rows) => rows.sort((a, b) => a.created.getTime() - b.created.getTime()));
}

/**
 * Serialises the work on one processor subscription (its checkout and its events) until the
 * transaction ends, so an event that finds the subscription unknown and waits cannot miss the
 * checkout that makes it known.
 */
export async function lockSubscription(trx: Trx, subscriptionId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('billing-subscription'), hashtext(${subscriptionId}))`.execute(
    trx,
  );
}

/** Takes the account's plan-change lock for the transaction; false when another change holds it. */
export async function tryLockPlanChange(trx: Trx, accountId: number): Promise<boolean> {
  const { rows } = await sql<{ locked: boolean }>`
    select pg_try_advisory_xact_lock(hashtext('billing-plan-change'), ${accountId}::int) as locked`.execute(
    trx,
  );
  return rows[0]?.locked === true;
}

// --- payments -------------------------------------------------------------------------------

export interface Payment {
  id: string;
  requestHash: string;
  status: string;
  answer: unknown;
  createdAt: Date;
}

/**
 * Claims an off-session charge: a new payment row, or, when the account already used the
 * Idempotency-Key for this kind of payment, undefined (a concurrent request with the same key
 * waits here until the first commits).
 */
export async function claimPayment(
  trx: Trx,
  payment: {
    accountId: number;
    kind: string;
    idempotencyKey: string | null;
    requestHash: string;
    amountCents: number;
    credits: number;
  },
): Promise<string | undefined> {
  const row = await trx
    .insertInto("billing_payments")
    .values({
      account_id: payment.accountId,
      kind: payment.kind,
      idempotency_key: payment.idempotencyKey,
      request_hash: payment.requestHash,
      amount_cents: payment.amountCents,
      credits: payment.credits,
      status: "pending",
    })
    .onConflict((oc) => oc.columns(["account_id", "kind", "idempotency_key"]).doNothing())
    .returning("id")
    .executeTakeFirst();
  return row?.id;
}

export async function findPaymentByKey(
  db: DbOrTrx,
  ref: { accountId: number; kind: string; idempotencyKey: string },
): Promise<Payment | undefined> {
  return db
    .selectFrom("billing_payments")
    .select(["id", "request_hash as requestHash", "status", "answer", "created_at as createdAt"])
    .where("account_id", "=", ref.accountId)
    .where("kind", "=", ref.kind)
    .where("idempotency_key", "=", ref.idempotencyKey)
    .executeTakeFirst();
}

export async function deletePayment(db: DbOrTrx, id: string): Promise<void> {
  await db.deleteFrom("billing_payments").where("id", "=", id).execute();
}

export async function finishPayment(
  db: DbOrTrx,
  id: string,
  result: { status: "succeeded" | "declined"; paymentIntentId: string | null; answer: unknown },
): Promise<void> {
  await db
    .updateTable("billing_payments")
    .set({
      status: result.status,
      payment_intent_id: result.paymentIntentId,
      answer: JSON.stringify(result.answer),
    })
    .where("id", "=", id)
    .execute();
}

/**
 * Marks a paid payment intent's credits as granted: true for the first caller only (the request
 * that charged, or the processor's `payment_intent.succeeded` event after a crash).
 */
export async function claimGrant(
  trx: Trx,
  grant: { paymentIntentId: string; accountId: number; credits: number },
): Promise<boolean> {
  const row = await trx
    .insertInto("billing_grants")
    .values({ payment_intent_id: grant.paymentIntentId, account_id: grant.accountId, credits: grant.credits })
    .onConflict((oc) => oc.column("payment_intent_id").doNothing())
    .returning("payment_intent_id")
    .executeTakeFirst();
  return row !== undefined;
}

// --- overage ---------------------------------------------------------------------------------

/** Overage of an account: used (from the ledger's `overage` bucket), collected and written off. */
export interface OverageUsage {
  /** Overage used since the period started. */
  periodUsedTenths: number;
  /** Overage used, collected or written off, all time. */
  usedTenths: number;
  collectedTenths: number;
  writtenOffTenths: number;
}

export async function findOverage(db: DbOrTrx, accountId: number, periodStart: Date): Promise<OverageUsage> {
  const used = await db
    .selectFrom("credit_ledger")
    .select([
      sql<string>`coalesce(-sum(amount_tenths), 0)`.as("used"),
      sql<string>`coalesce(-sum(amount_tenths) filter (where created_at >= ${periodStart}), 0)`.as(
        "periodUsed",
      ),
    ])
    .where("account_id", "=", accountId)
    .where("bucket", "=", "overage")
    .where("kind", "=", "charge")
    .executeTakeFirstOrThrow();
  const done = await db
    .selectFrom("billing_overage")
    .select(["collected_tenths as collected", "written_off_tenths as writtenOff"])
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  return {
    periodUsedTenths: Number(used.periodUsed),
    usedTenths: Number(used.used),
    collectedTenths: Number(done?.collected ?? 0),
    writtenOffTenths: Number(done?.writtenOff ?? 0),
  };
}

/** Adds collected or written-off overage to the account's totals. */
export async function addOverageSettled(
  db: DbOrTrx,
  accountId: number,
  settled: { collectedTenths?: number; writtenOffTenths?: number },
): Promise<void> {
  const collected = settled.collectedTenths ?? 0;
  const writtenOff = settled.writtenOffTenths ?? 0;
  await db
    .insertInto("billing_overage")
    .values({ account_id: accountId, collected_tenths: collected, written_off_tenths: writtenOff })
    .onConflict((oc) =>
      oc.column("account_id").doUpdateSet((eb) => ({
        collected_tenths: eb("billing_overage.collected_tenths", "+", collected),
        written_off_tenths: eb("billing_overage.written_off_tenths", "+", writtenOff),
        updated_at: new Date(),
      })),
    )
    .execute();
}

/** Accounts with an overage budget or overage not settled yet (the daily collection's list). */
export async function accountsWithOverage(db: DbOrTrx): Promise<number[]> {
  const rows = await db
    .selectFrom("credit_ledger")
    .select("account_id")
    .where("bucket", "=", "overage")
    .where("kind", "=", "charge")
    .groupBy("account_id")
    .execute();
  return rows.map((r) => r.account_id);
}

/** Locks the account's billing row for the transaction (one collection of an account at a time). */
export async function lockCustomer(trx: Trx, accountId: number): Promise<BillingCustomer | undefined> {
  const row = await trx
    .selectFrom("billing_customers")
    .select(CUSTOMER_COLUMNS)
    .where("account_id", "=", accountId)
    .forUpdate()
    .executeTakeFirst();
  return row && toCustomer(row);
}

/** Records a settled off-session charge of another kind than a credit purchase (overage). */
export async function insertPayment(
  db: DbOrTrx,
  payment: {
    accountId: number;
    kind: string;
    paymentIntentId: string | null;
    amountCents: number;
    status: string;
  },
): Promise<void> {
  await db
    .insertInto("billing_payments")
    .values({
      account_id: payment.accountId,
      kind: payment.kind,
      request_hash: payment.kind,
      payment_intent_id: payment.paymentIntentId,
      amount_cents: payment.amountCents,
      status: payment.status,
    })
    .execute();
}
