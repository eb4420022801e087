import { sql, type RawBuilder } from "kysely";
import type { DbOrTrx, Trx } from "../db/database.js";
import type { EventType, LeadEventRef, LeadEventSource, LeadEventType } from "./types.js";

/** The worker task that turns an account's outbox rows into deliveries (src/integrations/). */
export const DISPATCH_TASK = "events__dispatch";

/**
 * The event types the account has at least one active subscription to, on a connected
 * integration: the events worth writing. One indexed query; an account without integrations pays
 * only this.
 */
export async function subscribedEventTypes(trx: Trx, accountId: number): Promise<Set<EventType>> {
  const { rows } = await sql<{ types: EventType[] }>`
    select ${subscribedEventTypesArray(accountId)} as types`.execute(trx);
  return new Set(rows[0]?.types ?? []);
}

/** subscribedEventTypes as an SQL array expression, to read along with another statement. */
export function subscribedEventTypesArray(accountId: number): RawBuilder<EventType[]> {
  return sql<EventType[]>`array(
    select distinct s.event_type
    from integration_subscriptions s
    join integrations i on i.id = s.integration_id
    where s.account_id = ${accountId} and s.is_active and i.status = 'connected')`;
}

/** An event to write: its data is final (the lead events use emitLeadEvents). */
export interface OutboxEvent {
  accountId: number;
  type: Exclude<EventType, LeadEventType> | "lead.created";
  data: unknown;
  /** An integration that must not receive it (the one a push was sent to). */
  excludeIntegrationId?: number;
}

/**
 * Writes an event to the outbox in the transaction of its cause, so it is delivered exactly when
 * that commits. Written only when the account is subscribed to the type (any subscription made
 * after the event does not receive it); answers whether it was written.
 */
export async function emitEvent(trx: Trx, event: OutboxEvent): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`
    insert into event_outbox (account_id, event_type, data, exclude_integration_id)
    select ${event.accountId}, ${event.type}, cast(${JSON.stringify(event.data)} as jsonb),
      ${event.excludeIntegrationId ?? null}
    where exists (${activeSubscription(event.accountId, event.type, event.excludeIntegrationId)})
    returning id`.execute(trx);
  if (rows.length === 0) return false;
  await queueDispatch(trx, event.accountId);
  return true;
}

/** Lead events of delivered leads: one event per lead, built by the worker from the version. */
export interface LeadEvents {
  accountId: number;
  type: LeadEventType;
  source: LeadEventSource;
  leads: readonly LeadEventRef[];
  excludeIntegrationId?: number;
}

/**
 * Writes one outbox row for many lead events (a search of 1,000 new leads writes one row of
 * 1,000 lead versions, not 1,000 rows): the request stays as fast as without integrations, and
 * the worker expands it. Written only when the account is subscribed to the type.
 */
export async function emitLeadEvents(trx: Trx, events: LeadEvents): Promise<boolean> {
  if (events.leads.length === 0) return false;
  const refs = JSON.stringify({
    source: events.source,
    leads: events.leads.map((l) => [l.leadId, l.version]),
  });
  const { rows } = await sql<{ id: string }>`
    insert into event_outbox (account_id, event_type, lead_refs, exclude_integration_id)
    select ${events.accountId}, ${events.type}, cast(${refs} as jsonb), ${events.excludeIntegrationId ?? null}
    where exists (${activeSubscription(events.accountId, events.type, events.excludeIntegrationId)})
    returning id`.execute(trx);
  if (rows.length === 0) return false;
  await queueDispatch(trx, events.accountId);
  return true;
}

function activeSubscription(accountId: number, type: EventType, excludeIntegrationId?: number) {
  return sql`
    select 1 from integration_subscriptions s
    join integrations i on i.id = s.integration_id
    where s.account_id = ${accountId} and s.event_type = ${type} and s.is_active
      and i.status = 'connected' and i.id is distinct from ${excludeIntegrationId ?? null}`;
}

/**
 * Queues the account's dispatch (one pending job per account: concurrent requests of other
 * accounts never wait on each other's job row).
 */
async function queueDispatch(trx: Trx, accountId: number): Promise<void> {
  await sql`select ${dispatchJob(accountId)}`.execute(trx);
}

/**
 * The expression that queues the account's dispatch (`queueDispatch`), for composed statements:
 * `accountId` is a number or a column of the statement (the sweep). When the account's job is
 * locked (running, or left by a worker that died), graphile-worker clears that job's key and
 * queues a fresh one: its `add_jobs` replaces a job with the key that is not available.
 */
function dispatchJob(accountId: number | RawBuilder<number>): RawBuilder<unknown> {
  const key =
    typeof accountId === "number"
      ? sql`${`${DISPATCH_TASK}:${accountId}`}::text`
      : sql`${`${DISPATCH_TASK}:`}::text || ${accountId}::text`;
  return sql`graphile_worker.add_job(
      ${DISPATCH_TASK}::text,
      json_build_object('accountId', ${accountId}::integer),
      max_attempts => 25,
      job_key => ${key},
      job_key_mode => 'preserve_run_at'
    )`;
}

/** The worker task of the minute's outbox sweep (`sweepOutbox`). */
export const OUTBOX_SWEEP_TASK = "events__sweep_outbox";

/** How old an outbox row is when the sweep queues its account's dispatch again. */
export const OUTBOX_SWEEP_AGE_SECONDS = 60;

/**
 * The minute's sweep (docs/events.md "How events leave"): queues the dispatch of every account
 * with an outbox row older than `OUTBOX_SWEEP_AGE_SECONDS`, in one statement. A dispatch runs
 * within seconds of its event, so such a row was left by a dispatch job that a dead worker still
 * holds locked (graphile-worker frees it only after 4 hours) or that failed for good; the add
 * replaces that job by a fresh one of the same key. A dispatch takes only its own account's rows.
 * Answers the number of accounts whose dispatch it queued.
 */
export async function sweepOutbox(db: DbOrTrx): Promise<number> {
  const { rows } = await sql<{ queued: number }>`
    select count(q.job)::integer as queued from (
      select ${dispatchJob(sql<number>`o.account_id`)} as job
      from (
        select distinct account_id from event_outbox
        where occurred_at < now() - make_interval(secs => ${OUTBOX_SWEEP_AGE_SECONDS})
      ) o
    ) q`.execute(db);
  return rows[0]?.queued ?? 0;
}

/**
 * `emitLeadEvents` as parts of one statement, for a caller whose leads come from a CTE of the
 * same statement (recording deliveries writes its entries and their events in one round trip).
 * `insert(type, refs)` is a data-modifying CTE body that writes one outbox row of the lead events
 * in `refs` (a query of `lead_id`, `lead_version`), when there are any and the account is
 * subscribed; `dispatchWhen(ctes)` queues the dispatch when any of those CTEs wrote a row.
 */
export const leadEventStatementParts = {
  insert(
    events: {
      accountId: number;
      type: LeadEventType;
      source: LeadEventSource;
      excludeIntegrationId?: number;
    },
    refs: RawBuilder<unknown>,
  ): RawBuilder<unknown> {
    return sql`
      insert into event_outbox (account_id, event_type, lead_refs, exclude_integration_id)
      select ${events.accountId}, ${events.type},
        jsonb_build_object('source', ${events.source}::text,
          'leads', jsonb_agg(jsonb_build_array(r.lead_id, r.lead_version) order by r.lead_id)),
        ${events.excludeIntegrationId ?? null}::integer
      from (${refs}) r
      where exists (${activeSubscription(events.accountId, events.type, events.excludeIntegrationId)})
      having count(*) > 0
      returning id`;
  },
  dispatchWhen(accountId: number, written: readonly string[]): RawBuilder<unknown> {
    const any = sql.join(
      written.map((name) => sql`exists (select 1 from ${sql.ref(name)})`),
      sql` or `,
    );
    return sql`select ${dispatchJob(accountId)} where ${any}`;
  },
};
