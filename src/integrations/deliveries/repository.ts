import { sql, type RawBuilder, type Selectable } from "kysely";
import type { DbOrTrx, Trx } from "../../db/database.js";
import type { IntegrationDeliveriesTable } from "../../db/schema/integrations.js";
import type { EventType } from "../../events/types.js";
import type { Delivery, DeliveryIntegration, DeliveryStatus, StoredBatchSummary } from "./delivery.js";
import { FAILURES_BEFORE_ATTENTION } from "./schedule.js";

/** The worker task that claims due deliveries and sends them (deliver.ts). */
export const DELIVER_TASK = "integrations__deliver";

type DeliveryRow = Selectable<IntegrationDeliveriesTable>;

function toDelivery(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    accountId: row.account_id,
    integrationId: row.integration_id,
    subscriptionId: row.subscription_id,
    eventId: row.event_id,
    eventType: row.event_type as EventType,
    occurredAt: row.occurred_at,
    targetUrl: row.target_url,
    data: row.data,
    automatic: row.automatic,
    status: row.status as DeliveryStatus,
    statusCode: row.status_code,
    attemptCount: row.attempt_count,
    latencyMs: row.latency_ms,
    errorMessage: row.error_message,
    responseBody: row.response_body,
    nextAttemptAt: row.next_attempt_at,
    batchSummary: row.batch_summary as StoredBatchSummary | null,
    createdAt: row.created_at,
    completedAt: row.completed_at,
  };
}

const INTEGRATION_COLUMNS = [
  "integrations.id",
  "integrations.account_id",
  "integrations.provider",
  "integrations.status",
  "integrations.target_url",
  "integrations.signing_secret",
  "integrations.api_key",
  "integrations.api_key_destinations",
] as const;

function toIntegration(row: {
  id: number;
  account_id: number;
  provider: string;
  status: string;
  target_url: string | null;
  signing_secret: string;
  api_key: string | null;
  api_key_destinations: string[];
}): DeliveryIntegration {
  return {
    id: row.id,
    accountId: row.account_id,
    provider: row.provider,
    status: row.status,
    targetUrl: row.target_url,
    signingSecret: row.signing_secret,
    apiKey: row.api_key,
    apiKeyDestinations: row.api_key_destinations,
  };
}

/** One integration of the account with what sending needs; undefined for another account's. */
export async function findIntegration(
  db: DbOrTrx,
  accountId: number,
  id: number,
): Promise<DeliveryIntegration | undefined> {
  const row = await db
    .selectFrom("integrations")
    .select(INTEGRATION_COLUMNS)
    .where("integrations.id", "=", id)
    .where("integrations.account_id", "=", accountId)
    .executeTakeFirst();
  return row ? toIntegration(row) : undefined;
}

/** One delivery of the integration; undefined when it has no such delivery. */
export async function findDelivery(
  db: DbOrTrx,
  integrationId: number,
  id: number,
): Promise<Delivery | undefined> {
  const row = await db
    .selectFrom("integration_deliveries")
    .selectAll()
    .where("id", "=", id)
    .where("integration_id", "=", integrationId)
    .executeTakeFirst();
  return row ? toDelivery(row) : undefined;
}

/**
 * The delivery log: the 50 newest deliveries, plus up to 10 recent `stopped` / `not_sent`
 * batched deliveries older than those, newest first.
 */
export async function listDeliveries(db: DbOrTrx, integrationId: number): Promise<Delivery[]> {
  const newest = await db
    .selectFrom("integration_deliveries")
    .selectAll()
    .where("integration_id", "=", integrationId)
    .orderBy("id", "desc")
    .limit(50)
    .execute();
  const oldestShown = newest.at(-1)?.id;
  const batched =
    newest.length < 50 || oldestShown === undefined
      ? []
      : await db
          .selectFrom("integration_deliveries")
          .selectAll()
          .where("integration_id", "=", integrationId)
          .where("event_type", "=", "export.leads")
          .where("status", "in", ["stopped", "not_sent"])
          .where("id", "<", oldestShown)
          .orderBy("id", "desc")
          .limit(10)
          .execute();
  return [...newest, ...batched].map(toDelivery);
}

/** A delivery about to be written (automatic ones also get a job). */
export interface NewDelivery {
  accountId: number;
  integrationId: number;
  subscriptionId: number | null;
  eventId: string;
  eventType: EventType;
  occurredAt: Date;
  targetUrl: string;
  data: unknown;
  automatic: boolean;
  status: DeliveryStatus;
  batchSummary?: StoredBatchSummary | null;
}

/** Deliveries one claim takes (`lockDueDeliveries`). */
export const CLAIM_SIZE = 500;
/**
 * How long a batched delivery is held by its claimer between two batches (each batch is sent
 * within 8 s). A claimer that dies leaves it to be claimed again when the lease runs out
 * (docs/events.md "The delivery queue").
 */
export const CLAIM_LEASE_SECONDS = 300;
/** Claimer jobs queued for a burst of new deliveries, at most. */
const CLAIMERS_PER_BURST = 8;

/**
 * Writes deliveries in one statement. Automatic ones are due at once (`next_attempt_at`), and
 * claimer jobs are queued in the same statement, one per `CLAIM_SIZE` of them (at most
 * `CLAIMERS_PER_BURST`), so new deliveries never wait for the minute's sweep.
 */
export async function insertDeliveries(trx: DbOrTrx, deliveries: readonly NewDelivery[]): Promise<number[]> {
  if (deliveries.length === 0) return [];
  const rows = JSON.stringify(
    deliveries.map((d) => ({
      account_id: d.accountId,
      integration_id: d.integrationId,
      subscription_id: d.subscriptionId,
      event_id: d.eventId,
      event_type: d.eventType,
      occurred_at: d.occurredAt.toISOString(),
      target_url: d.targetUrl,
      data: d.data,
      automatic: d.automatic,
      status: d.status,
      batch_summary: d.batchSummary ?? null,
    })),
  );
  const { rows: ids } = await sql<{ id: number }>`
    with inserted as (
      insert into integration_deliveries
        (account_id, integration_id, subscription_id, event_id, event_type, occurred_at, target_url,
         data, automatic, status, batch_summary, next_attempt_at)
      select account_id, integration_id, subscription_id, event_id, event_type, occurred_at, target_url,
        data, automatic, status, batch_summary, case when automatic then now() end
      from jsonb_to_recordset(cast(${rows} as jsonb)) as r(
        account_id integer, integration_id integer, subscription_id integer, event_id text,
        event_type text, occurred_at timestamptz, target_url text, data jsonb, automatic boolean,
        status text, batch_summary jsonb)
      returning id, automatic
    ),
    queued as (
      select count(*) from graphile_worker.add_jobs(array(
        select row(${DELIVER_TASK}::text, '{}'::json, null, null, 25, null, null, null)::graphile_worker.job_spec
        from generate_series(1, least(${CLAIMERS_PER_BURST}::integer,
          ceil((select count(*) from inserted where automatic) / ${CLAIM_SIZE}::numeric)::integer))))
    )
    select id from inserted, queued order by id`.execute(trx);
  return ids.map((r) => r.id);
}

/**
 * Makes a delivery due at `runAt` (now when null) and wakes a claimer then: one wake-up job per
 * second of due time, shared by the deliveries due in that second.
 */
export async function queueAttempt(trx: DbOrTrx, deliveryId: number, runAt: Date | null): Promise<void> {
  await trx
    .updateTable("integration_deliveries")
    .set({ next_attempt_at: runAt ?? sql<Date>`now()` })
    .where("id", "=", deliveryId)
    .execute();
  await wakeClaimerAt(trx, runAt ?? new Date());
}

/**
 * Queues a claimer job at `runAt`, deduplicated per second of `runAt`: the job of a second keeps
 * the earliest time asked for in it (`preserve_run_at`), so a delivery due later in that second
 * can find the job already run; the claimer wakes again for it (wakeClaimerForNextDue).
 */
export async function wakeClaimerAt(trx: DbOrTrx, runAt: Date): Promise<void> {
  await sql`select ${claimerJob(sql`${runAt}::timestamptz`)}`.execute(trx);
}

/** The add_job expression of wakeClaimerAt for a `run_at` expression of the statement. */
function claimerJob(runAt: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`graphile_worker.add_job(
      ${DELIVER_TASK}::text, '{}'::json,
      run_at => ${runAt},
      max_attempts => 25,
      job_key => ${`${DELIVER_TASK}:`}::text || floor(extract(epoch from ${runAt}))::bigint::text,
      job_key_mode => 'preserve_run_at'
    )`;
}

/** How far ahead a claimer that found nothing due wakes one for the next due delivery. */
const NEXT_DUE_HORIZON_SECONDS = 60;

/**
 * Wakes a claimer when the earliest delivery due later than now (within a minute) is due, in one
 * statement; nothing when none is. A claimer runs this when it finds nothing more due: a delivery
 * due late in a second whose wake-up ran early in it is then sent on time, not by the minute's
 * sweep. Deliveries already due (held by other claimers) do not count, so this never wakes a
 * claimer for rows it cannot take.
 */
export async function wakeClaimerForNextDue(db: DbOrTrx): Promise<void> {
  await sql`
    select ${claimerJob(sql`d.at`)}
    from (
      select next_attempt_at as at from integration_deliveries
      where next_attempt_at > now()
        and next_attempt_at < now() + make_interval(secs => ${NEXT_DUE_HORIZON_SECONDS})
      order by next_attempt_at
      limit 1
    ) d`.execute(db);
}

/** A delivery taken by a claimer, with what sending it needs. */
export interface ClaimedDelivery {
  id: number;
  subscriptionId: number | null;
  eventId: string;
  eventType: EventType;
  occurredAt: Date;
  targetUrl: string;
  /** The event's `data` as stored JSON text: spliced into the envelope without a parse. */
  dataJson: string;
  status: DeliveryStatus;
  attemptCount: number;
  batchSummary: StoredBatchSummary | null;
  integration: DeliveryIntegration;
  /** Whether its subscription is still active (null: it has none). */
  subscriptionActive: boolean | null;
  /**
   * The 2xx answer of this attempt noted by a claim that died before recording it (answers.ts):
   * it reached its receiver and is recorded without being sent again.
   */
  answered: { statusCode: number | null; latencyMs: number; responseBody: string | null } | null;
}

interface ClaimedRow {
  id: number;
  subscription_id: number | null;
  event_id: string;
  event_type: EventType;
  occurred_at: Date;
  target_url: string;
  data_json: string;
  status: DeliveryStatus;
  attempt_count: number;
  batch_summary: StoredBatchSummary | null;
  integration_id: number;
  account_id: number;
  provider: string;
  integration_status: string;
  integration_target_url: string | null;
  signing_secret: string;
  api_key: string | null;
  api_key_destinations: string[];
  subscription_active: boolean | null;
  answered: boolean;
  answer_status_code: number | null;
  answer_latency_ms: number | null;
  answer_response_body: string | null;
}

/**
 * Claims up to `limit` due deliveries, oldest due first, in the claimer's transaction: their rows
 * stay locked (`for update skip locked`) until it commits, so every other claimer skips them
 * meanwhile, and a claimer that dies releases them at once. Nothing is written to claim them.
 */
export async function lockDueDeliveries(trx: Trx, limit: number): Promise<ClaimedDelivery[]> {
  const { rows } = await sql<ClaimedRow>`
    with claimed as (
      select id, integration_id, subscription_id, event_id, event_type, occurred_at, target_url,
        data::text as data_json, status, attempt_count, batch_summary
      from integration_deliveries
      where next_attempt_at <= now()
      order by next_attempt_at
      limit ${limit}
      for update skip locked
    )
    select c.*, i.account_id, i.provider, i.status as integration_status,
      i.target_url as integration_target_url, i.signing_secret, i.api_key, i.api_key_destinations,
      s.is_active as subscription_active, a.delivery_id is not null as answered,
      a.status_code as answer_status_code, a.latency_ms as answer_latency_ms,
      a.response_body as answer_response_body
    from claimed c
    join integrations i on i.id = c.integration_id
    left join integration_subscriptions s on s.id = c.subscription_id
    left join integration_delivery_answers a on a.delivery_id = c.id and a.attempt_count = c.attempt_count
    order by c.id`.execute(trx);
  return rows.map((row) => ({
    id: row.id,
    subscriptionId: row.subscription_id,
    eventId: row.event_id,
    eventType: row.event_type,
    occurredAt: row.occurred_at,
    targetUrl: row.target_url,
    dataJson: row.data_json,
    status: row.status,
    attemptCount: row.attempt_count,
    batchSummary: row.batch_summary,
    integration: toIntegration({
      id: row.integration_id,
      account_id: row.account_id,
      provider: row.provider,
      status: row.integration_status,
      target_url: row.integration_target_url,
      signing_secret: row.signing_secret,
      api_key: row.api_key,
      api_key_destinations: row.api_key_destinations,
    }),
    subscriptionActive: row.subscription_id === null ? null : (row.subscription_active ?? false),
    answered: row.answered
      ? {
          statusCode: row.answer_status_code,
          latencyMs: row.answer_latency_ms ?? 0,
          responseBody: row.answer_response_body,
        }
      : null,
  }));
}

/**
 * Gives claimed deliveries a lease (`next_attempt_at` moves `CLAIM_LEASE_SECONDS` ahead): for
 * the batched ones, sent batch by batch in transactions of their own after the claim commits.
 */
export async function leaseDeliveries(trx: Trx, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`
    update integration_deliveries
    set next_attempt_at = now() + make_interval(secs => ${CLAIM_LEASE_SECONDS})
    where id = any(${[...ids]}::integer[])`.execute(trx);
}

/** When the earliest waiting delivery is due (null: none waits). */
export async function nextDueAt(db: DbOrTrx): Promise<Date | null> {
  const row = await db
    .selectFrom("integration_deliveries")
    .select("next_attempt_at")
    .where("next_attempt_at", "is not", null)
    .orderBy("next_attempt_at")
    .limit(1)
    .executeTakeFirst();
  return row?.next_attempt_at ?? null;
}

/**
 * The attempts of one claim, recorded in one statement, which also deletes the answers noted for
 * `noted` (answers.ts).
 */
export async function recordAttempts(
  trx: DbOrTrx,
  attempts: readonly (AttemptRecord & { id: number })[],
  noted: readonly number[] = [],
): Promise<void> {
  if (attempts.length === 0) return;
  const rows = JSON.stringify(
    attempts.map((a) => ({
      id: a.id,
      status: a.status,
      status_code: a.statusCode,
      latency_ms: a.latencyMs,
      error_message: a.errorMessage,
      response_body: a.responseBody,
      completed: a.completed,
      next_attempt_at: a.nextAttemptAt?.toISOString() ?? null,
    })),
  );
  const forget =
    noted.length === 0
      ? sql``
      : sql`with forgotten as (
          delete from integration_delivery_answers where delivery_id = any(${[...noted]}::integer[]))
        `;
  await sql`${forget}
    update integration_deliveries d set
      status = v.status,
      status_code = v.status_code,
      latency_ms = v.latency_ms,
      error_message = v.error_message,
      response_body = v.response_body,
      attempt_count = d.attempt_count + 1,
      completed_at = case when v.completed then now() end,
      next_attempt_at = v.next_attempt_at
    from jsonb_to_recordset(cast(${rows} as jsonb)) as v(
      id integer, status text, status_code integer, latency_ms integer, error_message text,
      response_body text, completed boolean, next_attempt_at timestamptz)
    where d.id = v.id`.execute(trx);
}

/** The outcome of an attempt, as recorded on the delivery. */
export interface AttemptRecord {
  status: DeliveryStatus;
  statusCode: number | null;
  latencyMs: number;
  errorMessage: string | null;
  responseBody: string | null;
  /** Set when the delivery is finished (success, or failed / stopped for good). */
  completed: boolean;
  nextAttemptAt: Date | null;
  batchSummary?: StoredBatchSummary;
}

/** Records an attempt (one more in `attempt_count`). */
export async function recordAttempt(trx: DbOrTrx, id: number, attempt: AttemptRecord): Promise<void> {
  await trx
    .updateTable("integration_deliveries")
    .set((eb) => ({
      status: attempt.status,
      status_code: attempt.statusCode,
      latency_ms: attempt.latencyMs,
      error_message: attempt.errorMessage,
      response_body: attempt.responseBody,
      attempt_count: eb("attempt_count", "+", 1),
      completed_at: attempt.completed ? new Date() : null,
      next_attempt_at: attempt.nextAttemptAt,
      ...(attempt.batchSummary ? { batch_summary: JSON.stringify(attempt.batchSummary) } : {}),
    }))
    .where("id", "=", id)
    .execute();
}

/** Finishes a delivery without an attempt (its subscription was removed or deactivated). */
export async function finishUnsent(
  trx: DbOrTrx,
  id: number,
  status: DeliveryStatus,
  errorMessage: string,
  batchSummary?: StoredBatchSummary,
): Promise<void> {
  await trx
    .updateTable("integration_deliveries")
    .set({
      status,
      error_message: errorMessage,
      completed_at: new Date(),
      next_attempt_at: null,
      ...(batchSummary ? { batch_summary: JSON.stringify(batchSummary) } : {}),
    })
    .where("id", "=", id)
    .execute();
}

/**
 * Parks due deliveries of an integration while it is not connected; the integration's trigger
 * queues them again when it is (migration 0900). The integration row is read `for share`, so a
 * concurrent re-connection either commits first (nothing is parked: answers 0, they are sent) or
 * waits for the park and then finds them. Deliveries another claimer holds now are left to it.
 */
export async function parkUnlessConnected(
  trx: Trx,
  integrationId: number,
  deliveryIds: readonly number[],
): Promise<number> {
  const row = await trx
    .selectFrom("integrations")
    .select("status")
    .where("id", "=", integrationId)
    .forShare()
    .executeTakeFirst();
  if (!row || row.status === "connected") return 0;
  const { numAffectedRows } = await sql`
    update integration_deliveries set parked = true, next_attempt_at = null
    where id in (
      select id from integration_deliveries
      where id = any(${[...deliveryIds]}::integer[]) and integration_id = ${integrationId}
        and next_attempt_at is not null
      for update skip locked)`.execute(trx);
  return Number(numAffectedRows ?? 0);
}

/** A success resets the failure count; a `needs_attention` integration is connected again. */
export async function noteSuccess(trx: DbOrTrx, integrationId: number, reconnect: boolean): Promise<void> {
  await sql`
    update integrations set
      consecutive_failures = 0,
      last_success_at = now(),
      updated_at = now(),
      status = case when ${reconnect} and status = 'needs_attention' then 'connected' else status end
    where id = ${integrationId}
      and (consecutive_failures <> 0 or last_success_at is null
           or last_success_at < now() - interval '1 second'
           or (${reconnect} and status = 'needs_attention'))`.execute(trx);
}

/**
 * Counts failed automatic attempts in a row (`failures`, default one); the fifth in a row moves a
 * connected integration to `needs_attention`. Answers whether it moved now.
 */
export async function noteFailure(trx: DbOrTrx, integrationId: number, failures = 1): Promise<boolean> {
  const { rows } = await sql<{ moved: boolean }>`
    with before as (select status from integrations where id = ${integrationId} for update)
    update integrations i set
      consecutive_failures = i.consecutive_failures + ${failures}::integer,
      last_failure_at = now(),
      updated_at = now(),
      status = case
        when i.status = 'connected'
          and i.consecutive_failures + ${failures}::integer >= ${FAILURES_BEFORE_ATTENTION}
        then 'needs_attention' else i.status end
    from before
    where i.id = ${integrationId}
    returning (before.status = 'connected' and i.status = 'needs_attention') as moved`.execute(trx);
  return rows[0]?.moved ?? false;
}

/** A receiver's 410 Gone turns its subscription off. */
export async function deactivateSubscription(trx: DbOrTrx, subscriptionId: number): Promise<void> {
  await trx
    .updateTable("integration_subscriptions")
    .set({ is_active: false })
    .where("id", "=", subscriptionId)
    .execute();
}

/** Puts the unsent batches of a batched delivery back in the queue. */
export async function requeueBatches(trx: DbOrTrx, id: number, summary: StoredBatchSummary): Promise<void> {
  await trx
    .updateTable("integration_deliveries")
    .set({
      status: "queued",
      completed_at: null,
      next_attempt_at: null,
      batch_summary: JSON.stringify(summary),
    })
    .where("id", "=", id)
    .execute();
  await queueAttempt(trx, id, null);
}
