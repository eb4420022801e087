import { sql } from "kysely";
import type { Db } from "../../src/db/database.js";
import { FAILURES_BEFORE_ATTENTION } from "../../src/integrations/deliveries/schedule.js";
import { api, newAccount, sleep, startService, type ScenarioResult } from "./harness.js";
import { BROAD_KEYWORDS } from "./postgres-outage.js";
import { createWebhook, startReceiver, type Receiver } from "./receiver.js";
import { percentile } from "./traffic.js";

// Scenario 4 (issue 36): webhook receivers that answer 500 or hang, beside healthy ones. The
// worker runs a shortened retry schedule (`DELIVERY_RETRY_DELAYS_MS`, the documented one in
// seconds where the real one is minutes and hours). Each bad integration gets one `lead.created`
// event; its receiver records when every attempt arrives. Checked:
// - the attempts follow the schedule: the gap between attempt n and n+1 is at least the n-th delay
//   (plus the 8 s send timeout after a hang) and at most that with its 10% jitter plus the
//   documented slack (below);
// - the integration is `needs_attention` (GET /integrations/{id}) after exactly
//   FAILURES_BEFORE_ATTENTION failed attempts, and nothing more is sent to it;
// - the healthy integrations of other accounts, fed by paid searches all along, get their
//   deliveries no later than before: the p95 of event-to-receipt latency while the bad receivers
//   misbehave is at most the baseline's p95 plus HOLD_MS.

/** The retry schedule the worker runs (ms): 1 s, 2 s, 4 s, ... instead of 5 s, 5 min, 30 min, ... */
export const RETRY_DELAYS_MS = [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000];
/** The send timeout of one attempt (docs/events.md). */
const SEND_TIMEOUT_MS = 8_000;
/**
 * Slack allowed on top of a retry's jittered delay: its wake-up job is due on the next whole
 * second and the runner polls every 2 s (3 s), plus what a claim holding a hung attempt may keep a
 * failed delivery's record back (docs/events.md: a slow receiver holds a claim's rows for at most
 * 2 s plus one 8 s attempt).
 */
const WAKE_UP_MS = 3_000;
const HOLD_MS = 2_000 + SEND_TIMEOUT_MS;

const HEALTHY = 4;
const FAILING = 1;
const HANGING = 2;
const BASELINE_MS = 20_000;

interface Bad {
  kind: "500" | "hang";
  path: string;
  key: string;
  integrationId: number;
  /** When GET /integrations/{id} first answered `needs_attention`. */
  attentionAt?: number;
}

/**
 * Latency (ms) from each healthy delivery's event (its occurrence) to its first arrival at the
 * receiver, for the events that occurred in [from, to); never received: Infinity.
 */
async function latencies(db: Db, receiver: Receiver, from: number, to: number): Promise<number[]> {
  const rows = await sql<{ event_id: string; occurred: number }>`
    select event_id, (extract(epoch from occurred_at) * 1000)::float8 as occurred
    from integration_deliveries
    where target_url like ${"%/ok%"} and occurred_at >= to_timestamp(${from / 1000})
      and occurred_at < to_timestamp(${to / 1000})`.execute(db);
  const values: number[] = [];
  for (const row of rows.rows) {
    const got = receiver.received.events.get(row.event_id);
    values.push(got ? got.firstAt - Number(row.occurred) : Number.POSITIVE_INFINITY);
  }
  return values;
}

export async function receiverFaults(): Promise<ScenarioResult> {
  const service = await startService({
    leads: 6_000,
    env: { DELIVERY_RETRY_DELAYS_MS: RETRY_DELAYS_MS.join(",") },
  });
  const receiver = await startReceiver();
  receiver.answer = (path) =>
    path.startsWith("/hang")
      ? { status: 200, hang: true }
      : path.startsWith("/bad")
        ? { status: 500 }
        : { status: 200 };
  const failures: string[] = [];
  try {
    const healthy: { key: string }[] = [];
    for (let i = 0; i < HEALTHY; i += 1) {
      const account = await newAccount(service.db, `rf-ok${i}`);
      await createWebhook(service.base, account.apiKey, receiver, `/ok${i}`);
      healthy.push({ key: account.apiKey });
    }
    const bad: Bad[] = [];
    for (let i = 0; i < FAILING + HANGING; i += 1) {
      const kind = i < FAILING ? "500" : "hang";
      const path = kind === "500" ? `/bad${i}` : `/hang${i}`;
      const account = await newAccount(service.db, `rf-${kind}${i}`);
      const integrationId = await createWebhook(service.base, account.apiKey, receiver, path);
      bad.push({ kind, path, key: account.apiKey, integrationId });
    }

    // Healthy traffic all along: each healthy account searches a new page of 10 leads (10 events).
    let running = true;
    const statuses = new Map<number, number>();
    const clients = healthy.map(async (account) => {
      for (let page = 1; running; page += 1) {
        const res = await api(
          service.base,
          account.key,
          "GET",
          `/leads?positiveKeywords=${BROAD_KEYWORDS}&limit=10&page=${page}`,
        ).catch(() => undefined);
        statuses.set(res?.status ?? 0, (statuses.get(res?.status ?? 0) ?? 0) + 1);
        await sleep(300);
      }
    });
    const baselineFrom = Date.now();
    await sleep(BASELINE_MS);
    const faultsFrom = Date.now();
    // One event for each bad integration: a search of one new lead.
    for (const b of bad) {
      const res = await api(service.base, b.key, "GET", `/leads?positiveKeywords=${BROAD_KEYWORDS}&limit=1`);
      if (res.status !== 200) failures.push(`the search of ${b.path} answered ${res.status}`);
    }
    // Until every bad integration needs attention (at most the time its attempts take, doubled).
    const worstMs =
      2 * (FAILURES_BEFORE_ATTENTION * SEND_TIMEOUT_MS + RETRY_DELAYS_MS.slice(0, 4).reduce((a, b) => a + b));
    const deadline = Date.now() + worstMs;
    while (Date.now() < deadline && bad.some((b) => b.attentionAt === undefined)) {
      for (const b of bad.filter((x) => x.attentionAt === undefined)) {
        const res = await api(service.base, b.key, "GET", `/integrations/${b.integrationId}`).catch(
          () => undefined,
        );
        const integration =
          (res?.body.data as { integration?: { status?: string }; status?: string } | undefined) ?? {};
        const status = integration.integration?.status ?? integration.status;
        if (status === "needs_attention") b.attentionAt = Date.now();
      }
      await sleep(250);
    }
    const faultsTo = Date.now();
    running = false;
    await Promise.all(clients);
    // Longer than any retry that would come next, had the integration not been stopped.
    await sleep(RETRY_DELAYS_MS[FAILURES_BEFORE_ATTENTION - 1]! * 1.1 + WAKE_UP_MS);
    // Every healthy delivery arrives.
    const drainDeadline = Date.now() + 60_000;
    let missing = Infinity;
    while (Date.now() < drainDeadline && missing > 0) {
      missing = (await latencies(service.db, receiver, baselineFrom, Date.now())).filter(
        (v) => !Number.isFinite(v),
      ).length;
      if (missing > 0) await sleep(500);
    }

    // The bad receivers' attempts against the schedule.
    let worstLateMs = 0;
    const attemptsFigure: string[] = [];
    for (const b of bad) {
      const events = [...receiver.received.events.values()].filter((e) => e.path === b.path);
      if (events.length !== 1) {
        failures.push(`${b.path} received ${events.length} events, not 1`);
        continue;
      }
      const at = events[0]!.at;
      attemptsFigure.push(`${b.kind}:${at.length}`);
      if (at.length !== FAILURES_BEFORE_ATTENTION)
        failures.push(`${b.path}: ${at.length} attempts, not ${FAILURES_BEFORE_ATTENTION}`);
      if (b.attentionAt === undefined) failures.push(`${b.path} never needed attention`);
      else if (at.length < FAILURES_BEFORE_ATTENTION)
        failures.push(`${b.path} needed attention after ${at.length} attempts`);
      const attemptMs = b.kind === "hang" ? SEND_TIMEOUT_MS : 0;
      for (let n = 0; n + 1 < at.length; n += 1) {
        const gap = at[n + 1]! - at[n]!;
        const delay = RETRY_DELAYS_MS[n]!;
        const least = attemptMs + delay - 100;
        const most = attemptMs + delay * 1.1 + WAKE_UP_MS + HOLD_MS;
        worstLateMs = Math.max(worstLateMs, gap - attemptMs - delay);
        if (gap < least)
          failures.push(`${b.path} attempt ${n + 2} came ${gap} ms after the previous (< ${least})`);
        if (gap > most)
          failures.push(
            `${b.path} attempt ${n + 2} came ${gap} ms after the previous (> ${Math.round(most)})`,
          );
      }
    }
    const baseline = await latencies(service.db, receiver, baselineFrom, faultsFrom);
    const during = await latencies(service.db, receiver, faultsFrom, faultsTo);
    const lost = [...baseline, ...during].filter((v) => !Number.isFinite(v)).length;
    const p95Base = percentile(baseline.filter(Number.isFinite), 95);
    const p95During = percentile(during.filter(Number.isFinite), 95);
    if (lost) failures.push(`${lost} healthy deliveries not received`);
    if (baseline.length === 0 || during.length === 0) failures.push("no healthy deliveries measured");
    if (p95During > p95Base + HOLD_MS)
      failures.push(`healthy p95 ${p95During} ms during the faults > baseline ${p95Base} ms + ${HOLD_MS} ms`);
    if ([...statuses.keys()].some((s) => s !== 200))
      failures.push(`healthy searches answered ${[...statuses].join(";")}`);
    const badSignatures = receiver.received.badSignatures;
    if (badSignatures) failures.push(`${badSignatures} signatures did not verify`);
    const attention = await sql<{ n: number }>`
      select count(*)::int as n from integrations where status = 'needs_attention'`.execute(service.db);
    return {
      name: "receiver-faults",
      figures: {
        delays: RETRY_DELAYS_MS.map((d) => d / 1000).join(",") + "s",
        attempts: attemptsFigure.join(","),
        needsAttention: Number(attention.rows[0]!.n),
        worstLateMs: Math.round(worstLateMs),
        healthySent: baseline.length + during.length,
        healthyLost: lost,
        p95BaselineMs: p95Base,
        p95DuringMs: p95During,
        maxDuringMs: Math.max(0, ...during.filter(Number.isFinite)),
        faultSeconds: Math.round((faultsTo - faultsFrom) / 1000),
      },
      failures,
    };
  } finally {
    await receiver.close();
    await service.close();
  }
}
