import { sql } from "kysely";
import type { Db } from "../../src/db/database.js";
import { api, moneyOf, sleep } from "./harness.js";
import type { Receiver } from "./receiver.js";

// What the scenarios count after a fault: webhook events against what the service created, jobs
// against what it accepted, and money against the lead export history.

export interface EventCount {
  /** Deliveries the service created (one per event and integration). */
  sent: number;
  /** Of those, distinct event ids that reached the receiver. */
  received: number;
  /** Deliveries received more than once (extra copies). */
  duplicates: number;
  /** Created deliveries never received. */
  lost: number;
  badSignatures: number;
  /** Outbox rows not yet turned into deliveries. */
  outboxLeft: number;
}

/** Counts events after waiting (up to `timeoutMs`) for the outbox and every delivery to be done. */
export async function countEvents(db: Db, receiver: Receiver, timeoutMs: number): Promise<EventCount> {
  const deadline = Date.now() + timeoutMs;
  const snapshot = async () => {
    const outbox = await sql<{ n: number }>`select count(*)::int as n from event_outbox`.execute(db);
    const ids = await sql<{ event_id: string }>`select event_id from integration_deliveries`.execute(db);
    return { outboxLeft: Number(outbox.rows[0]!.n), ids: ids.rows.map((r) => r.event_id) };
  };
  let state = await snapshot();
  while (Date.now() < deadline) {
    const missing = state.ids.filter((id) => !receiver.received.events.has(id)).length;
    if (state.outboxLeft === 0 && missing === 0) break;
    await sleep(500);
    state = await snapshot();
  }
  const received = state.ids.filter((id) => receiver.received.events.has(id)).length;
  let duplicates = 0;
  for (const { count } of receiver.received.events.values()) duplicates += count - 1;
  return {
    sent: state.ids.length,
    received,
    duplicates,
    lost: state.ids.length - received,
    badSignatures: receiver.received.badSignatures,
    outboxLeft: state.outboxLeft,
  };
}

/** Polls every accepted job until it has an answer (up to `timeoutMs`); returns how each ended. */
export async function settleJobs(
  base: string,
  jobs: { key: string; id: string }[],
  timeoutMs: number,
): Promise<{ completed: number; failed: number; unfinished: number; failures: string[] }> {
  const deadline = Date.now() + timeoutMs;
  let completed = 0;
  let failed = 0;
  const failures: string[] = [];
  const open = [...jobs];
  while (open.length > 0 && Date.now() < deadline) {
    for (const job of [...open]) {
      const res = await api(base, job.key, "GET", `/jobs/${job.id}`).catch(() => undefined);
      const status = res?.headers.get("x-svc-job-status");
      if (!res || res.status === 202 || status === "running") continue;
      open.splice(open.indexOf(job), 1);
      if (status === "failed" || res.status >= 400) {
        failed += 1;
        failures.push(`${job.id}: ${res.status} ${String(res.body.error ?? "")}`);
      } else completed += 1;
    }
    if (open.length > 0) await sleep(500);
  }
  return { completed, failed, unfinished: open.length, failures };
}

/**
 * What an account's published enrichment runs charged for live results (0.1 credit each, not
 * leads, so not in the lead export history): the `scraped` rows of its runs whose credits are
 * final (a failed run charges none; docs/enrichments.md).
 */
export async function liveResultTenths(db: Db, accountId: number): Promise<number> {
  const res = await sql<{ n: number }>`
    select coalesce(sum(u.credits_tenths), 0)::bigint as n
    from enrichment_urls u join enrichment_runs r on r.id = u.run_id
    where r.account_id = ${accountId} and r.credits_final and r.status <> 'failed'
      and u.status = 'scraped'`.execute(db);
  return Number(res.rows[0]!.n);
}

/**
 * Every account's charges against its lead export history (one lead, one credit) plus the live
 * enrichment results it was delivered: the accounts whose money disagrees.
 */
export async function checkMoney(
  db: Db,
  accountIds: number[],
): Promise<{ chargedTenths: number; expectedTenths: number; wrong: string[] }> {
  let chargedTenths = 0;
  let expectedTenths = 0;
  const wrong: string[] = [];
  for (const accountId of accountIds) {
    const money = await moneyOf(db, accountId);
    const live = await liveResultTenths(db, accountId);
    chargedTenths += money.chargedTenths;
    expectedTenths += money.expectedTenths + live;
    if (money.chargedTenths !== money.expectedTenths + live) {
      wrong.push(
        `account ${accountId} charged ${money.chargedTenths} tenths for ${money.leads} leads` +
          (live ? ` and ${live} live results` : ""),
      );
    }
  }
  return { chargedTenths, expectedTenths, wrong };
}
