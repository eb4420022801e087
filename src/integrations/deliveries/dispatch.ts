import { sql } from "kysely";
import type { Db, Trx } from "../../db/database.js";
import { newEventId } from "../../events/ids.js";
import type { EventType, LeadEventSource } from "../../events/types.js";
import { toLeadSummary } from "../../leads/summary.js";
import { findLeadVersions, leadVersionKey } from "../../leads/versions.js";
import { newBatchSummary } from "./batches.js";
import type { ExportLeadsStoredData } from "./delivery.js";
import { insertDeliveries, type NewDelivery } from "./repository.js";

/** Lead events turned into deliveries per transaction (a big outbox row is taken in parts). */
const EVENTS_PER_TRANSACTION = 1_000;

interface OutboxRow {
  id: string;
  event_type: EventType;
  data: unknown;
  lead_refs: { source: LeadEventSource; leads: [number, number][] } | null;
  exclude_integration_id: number | null;
  occurred_at: Date;
}

interface Subscriber {
  subscription_id: number;
  integration_id: number;
  event_type: EventType;
  target_url: string | null;
  created_at: Date;
}

/**
 * The `events__dispatch` task of one account: turns its outbox rows into deliveries (one per
 * subscription and event, each with its job) and deletes them, in transactions of at most 1,000
 * events, until the outbox of the account is empty. Rows are taken `for update skip locked`, so
 * two dispatchers of the same account never take the same row; a crash rolls a part back whole.
 */
export async function dispatchAccountEvents(db: Db, accountId: number): Promise<number> {
  let delivered = 0;
  for (;;) {
    const written = await db.transaction().execute((trx) => dispatchSome(trx, accountId));
    if (written === null) return delivered;
    delivered += written;
  }
}

/** One transaction's worth; null when the outbox of the account is empty. */
async function dispatchSome(trx: Trx, accountId: number): Promise<number | null> {
  const { rows } = await sql<OutboxRow>`
    select id, event_type, data, lead_refs, exclude_integration_id, occurred_at
    from event_outbox where account_id = ${accountId}
    order by id limit 100 for update skip locked`.execute(trx);
  if (rows.length === 0) return null;
  const subscribers = await activeSubscribers(trx, accountId);
  const deliveries: NewDelivery[] = [];
  let budget = EVENTS_PER_TRANSACTION;
  for (const row of rows) {
    if (budget <= 0) break;
    const targets = subscribers.filter(
      (s) =>
        s.event_type === row.event_type &&
        s.integration_id !== row.exclude_integration_id &&
        s.created_at.getTime() <= row.occurred_at.getTime() &&
        s.target_url !== null,
    );
    const taken = await expandRow(trx, accountId, row, targets, budget, deliveries);
    budget -= taken;
  }
  await insertDeliveries(trx, deliveries);
  return deliveries.length;
}

/** The account's active subscriptions on connected integrations, with their destination. */
async function activeSubscribers(trx: Trx, accountId: number): Promise<Subscriber[]> {
  const { rows } = await sql<Subscriber>`
    select s.id as subscription_id, s.integration_id, s.event_type,
      coalesce(s.target_url, i.target_url, case i.provider
        when 'crm_contacts' then 'crm_contacts://contacts' when 'crm_leads' then 'crm_leads://leads'
        when 'crm_deals' then 'crm_deals://persons' end) as target_url, s.created_at
    from integration_subscriptions s
    join integrations i on i.id = s.integration_id
    where s.account_id = ${accountId} and s.is_active and i.status = 'connected'`.execute(trx);
  return rows;
}

/**
 * Adds the deliveries of one outbox row (at most `budget` of its lead events) and deletes it, or
 * keeps the rest of its leads for the next transaction. Answers how many events it took.
 */
async function expandRow(
  trx: Trx,
  accountId: number,
  row: OutboxRow,
  targets: Subscriber[],
  budget: number,
  out: NewDelivery[],
): Promise<number> {
  const base = (eventId: string, data: unknown) =>
    targets.map((t): NewDelivery => ({
      accountId,
      integrationId: t.integration_id,
      subscriptionId: t.subscription_id,
      eventId,
      eventType: row.event_type,
      occurredAt: row.occurred_at,
      targetUrl: t.target_url as string,
      data,
      automatic: true,
      status: "pending",
    }));
  if (row.event_type === "export.leads") {
    const data = row.data as ExportLeadsStoredData;
    const eventId = newEventId();
    for (const d of base(eventId, data)) {
      out.push({ ...d, status: "queued", batchSummary: newBatchSummary(data.exportId, data.leads.length) });
    }
    await deleteRow(trx, row.id);
    return 1;
  }
  if (!row.lead_refs) {
    out.push(...base(newEventId(), row.data));
    await deleteRow(trx, row.id);
    return 1;
  }
  const taken = row.lead_refs.leads.slice(0, budget);
  const rest = row.lead_refs.leads.slice(budget);
  if (targets.length > 0) {
    const refs = taken.map(([leadId, version]) => ({ leadId, version }));
    const versions = await findLeadVersions(trx, refs);
    for (const ref of refs) {
      const lead = versions.get(leadVersionKey(ref));
      if (lead) out.push(...base(newEventId(), toLeadSummary(lead, row.lead_refs.source)));
    }
  }
  if (rest.length === 0) await deleteRow(trx, row.id);
  else {
    await sql`update event_outbox set lead_refs = cast(${JSON.stringify({ ...row.lead_refs, leads: rest })} as jsonb)
      where id = ${row.id}`.execute(trx);
  }
  return taken.length;
}

async function deleteRow(trx: Trx, id: string): Promise<void> {
  await sql`delete from event_outbox where id = ${id}`.execute(trx);
}
