import { parseCrontab, runOnce } from "graphile-worker";
import { sql } from "kysely";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DISPATCH_TASK, emitEvent, OUTBOX_SWEEP_TASK } from "../src/events/outbox.js";
import { deliveryTaskList, OUTBOX_SWEEP_CRONTAB } from "../src/integrations/deliveries/tasks.js";
import { workerLogger } from "../src/jobs/runtime.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { createWebhook, startReceiver, type Receiver } from "./helpers/webhook-receiver.js";

// The minute's outbox sweep (docs/events.md "How events leave"): a dispatch job that was running
// when its worker was SIGKILLed stays locked by the dead worker for 4 hours; the sweep queues the
// dispatch of every account whose outbox rows are older than a minute again.
const t = useTestApp();
let receiver: Receiver;
const silent = pino({ level: "silent" });

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

const EVENTS = 3;

/** An account with a `lead.created` webhook and `EVENTS` events in its outbox (its dispatch job queued). */
async function accountWithOutbox() {
  const { accountId, auth } = await buildAccount(t.ctx.db);
  const hook = await createWebhook(t, receiver, auth, ["lead.created"]);
  // Subscribed well before the events (their times are moved back below).
  await sql`update integration_subscriptions set created_at = now() - interval '1 day'
    where account_id = ${accountId}`.execute(t.ctx.db);
  await t.ctx.db.transaction().execute(async (trx) => {
    for (let i = 0; i < EVENTS; i += 1) {
      await emitEvent(trx, { accountId, type: "lead.created", data: { n: i } });
    }
  });
  return { accountId, hook };
}

/** The account's dispatch job as a worker SIGKILLed while running it leaves it: locked, attempted. */
async function lockedByDeadWorker(accountId: number): Promise<string> {
  const { rows } = await sql<{ id: string }>`
    update graphile_worker._private_jobs
    set locked_at = now() - interval '10 seconds', locked_by = 'worker-killed-pid-4242',
      attempts = attempts + 1
    where key = ${`${DISPATCH_TASK}:${accountId}`}
    returning id`.execute(t.ctx.db);
  expect(rows).toHaveLength(1);
  return rows[0]!.id;
}

async function backdateOutbox(accountId: number, seconds: number): Promise<void> {
  await sql`update event_outbox set occurred_at = now() - make_interval(secs => ${seconds})
    where account_id = ${accountId}`.execute(t.ctx.db);
}

async function outboxRows(accountId: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::integer as n from event_outbox where account_id = ${accountId}`.execute(t.ctx.db);
  return rows[0]!.n;
}

async function deliveries(accountId: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::integer as n from integration_deliveries where account_id = ${accountId}`.execute(
    t.ctx.db,
  );
  return rows[0]!.n;
}

/** Runs what the delivery runner would, for the sweep and dispatch tasks only, until none is available. */
async function runSweepAndDispatch(): Promise<void> {
  const tasks = deliveryTaskList({ db: t.ctx.db, outbound: t.ctx.outbound, logger: silent });
  await runOnce({
    pgPool: t.ctx.pool,
    noHandleSignals: true,
    taskList: { [OUTBOX_SWEEP_TASK]: tasks[OUTBOX_SWEEP_TASK]!, [DISPATCH_TASK]: tasks[DISPATCH_TASK]! },
    logger: workerLogger(silent),
  });
}

async function sweepOnce(): Promise<void> {
  await sql`select graphile_worker.add_job(${OUTBOX_SWEEP_TASK}::text, '{}'::json)`.execute(t.ctx.db);
  await runSweepAndDispatch();
}

describe("the outbox sweep", () => {
  it("is on the delivery runner's crontab, every minute", () => {
    const [item] = parseCrontab(OUTBOX_SWEEP_CRONTAB);
    expect(item).toMatchObject({ task: OUTBOX_SWEEP_TASK });
    expect(item!.match({ min: 7, hour: 3, date: 1, month: 1, dow: 0 } as never)).toBe(true);
    expect(item!.match({ min: 8, hour: 3, date: 1, month: 1, dow: 0 } as never)).toBe(true);
  });

  it("dispatches rows older than a minute that a dead worker's locked job holds back, and only those", async () => {
    const stuck = await accountWithOutbox();
    const fresh = await accountWithOutbox();
    const deadStuckJob = await lockedByDeadWorker(stuck.accountId);
    const deadFreshJob = await lockedByDeadWorker(fresh.accountId);
    await backdateOutbox(stuck.accountId, 90);
    await backdateOutbox(fresh.accountId, 20);

    // Without the sweep nothing runs them: the locked jobs are not available for 4 hours.
    await runSweepAndDispatch();
    expect(await outboxRows(stuck.accountId)).toBe(EVENTS);
    expect(await deliveries(stuck.accountId)).toBe(0);

    await sweepOnce();

    // The stuck account's rows became deliveries (one per event and subscription) and left the outbox.
    expect(await outboxRows(stuck.accountId)).toBe(0);
    expect(await deliveries(stuck.accountId)).toBe(EVENTS);
    const created = await sql<{ integration_id: number; event_type: string; status: string }>`
      select integration_id, event_type, status from integration_deliveries
      where account_id = ${stuck.accountId}`.execute(t.ctx.db);
    for (const row of created.rows) {
      expect(row).toEqual({ integration_id: stuck.hook.id, event_type: "lead.created", status: "pending" });
    }
    // The fresh account (rows younger than a minute) was not swept: its rows wait for its own job.
    expect(await outboxRows(fresh.accountId)).toBe(EVENTS);
    expect(await deliveries(fresh.accountId)).toBe(0);
    const jobs = await sql<{ id: string; key: string | null; locked_by: string | null }>`
      select id, key, locked_by from graphile_worker._private_jobs
      where id in (${deadStuckJob}, ${deadFreshJob}) order by id`.execute(t.ctx.db);
    expect(jobs.rows).toEqual([
      // The dead worker's job lost its key to the fresh job (which ran); still locked, never run again.
      { id: deadStuckJob, key: null, locked_by: "worker-killed-pid-4242" },
      { id: deadFreshJob, key: `${DISPATCH_TASK}:${fresh.accountId}`, locked_by: "worker-killed-pid-4242" },
    ]);

    // A minute later the fresh account's rows are old enough: the next sweep takes them.
    await backdateOutbox(fresh.accountId, 90);
    await sweepOnce();
    expect(await outboxRows(fresh.accountId)).toBe(0);
    expect(await deliveries(fresh.accountId)).toBe(EVENTS);
    // The first account's deliveries are unchanged (its rows were not dispatched twice).
    expect(await deliveries(stuck.accountId)).toBe(EVENTS);
  });

  it("queues each swept account's own dispatch, and only those of accounts with old rows", async () => {
    const a = await accountWithOutbox();
    const b = await accountWithOutbox();
    const young = await accountWithOutbox();
    for (const x of [a, b, young]) await lockedByDeadWorker(x.accountId);
    await backdateOutbox(a.accountId, 61);
    await backdateOutbox(b.accountId, 3_600);
    await backdateOutbox(young.accountId, 50);
    // The sweep alone (no dispatch task here): what it queued is left to read.
    const tasks = deliveryTaskList({ db: t.ctx.db, outbound: t.ctx.outbound, logger: silent });
    await sql`select graphile_worker.add_job(${OUTBOX_SWEEP_TASK}::text, '{}'::json)`.execute(t.ctx.db);
    await runOnce({
      pgPool: t.ctx.pool,
      noHandleSignals: true,
      taskList: { [OUTBOX_SWEEP_TASK]: tasks[OUTBOX_SWEEP_TASK]! },
      logger: workerLogger(silent),
    });
    const queued = await sql<{ key: string; payload: { accountId: number } }>`
      select j.key, j.payload from graphile_worker._private_jobs j
      join graphile_worker._private_tasks k on k.id = j.task_id
      where k.identifier = ${DISPATCH_TASK} and j.locked_at is null
        and j.payload->>'accountId' in (${String(a.accountId)}, ${String(b.accountId)}, ${String(young.accountId)})
      order by j.key`.execute(t.ctx.db);
    const expected = [a.accountId, b.accountId]
      .map((id) => ({ key: `${DISPATCH_TASK}:${id}`, payload: { accountId: id } }))
      .sort((x, y) => x.key.localeCompare(y.key));
    expect(queued.rows).toEqual(expected);
    // Each dispatch takes its own account's rows only.
    await runSweepAndDispatch();
    expect(await deliveries(a.accountId)).toBe(EVENTS);
    expect(await deliveries(b.accountId)).toBe(EVENTS);
    expect(await outboxRows(young.accountId)).toBe(EVENTS);
    expect(await deliveries(young.accountId)).toBe(0);
  });
});
