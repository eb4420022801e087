import { sql } from "kysely";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDatabase } from "../src/db/database.js";
import type { DeliverDeps } from "../src/integrations/deliveries/attempts.js";
import { deliverDue, SEND_CONCURRENCY } from "../src/integrations/deliveries/deliver.js";
import { answerWriter, noteAnswers } from "../src/integrations/deliveries/answers.js";
import { CLAIM_SIZE, DELIVER_TASK } from "../src/integrations/deliveries/repository.js";
import { deliveryTaskList } from "../src/integrations/deliveries/tasks.js";
import { Outbound } from "../src/outbound/index.js";
import { useTestApp } from "./helpers/app.js";
import { accountWithLeadDeliveries } from "./helpers/delivery-factories.js";
import { TEST_RETRY_DELAYS_MS } from "./helpers/delivery-runner.js";
import { startReceiver, type Receiver } from "./helpers/webhook-receiver.js";

// A claimer whose worker is SIGKILLed in the middle of a claim (docs/events.md "The delivery
// queue"): its transaction dies with its connection, so nothing of the claim is recorded and the
// next claim takes every delivery again. Answers noted as they arrive keep the re-sends to what
// was on the wire at the kill, instead of everything the claim had sent.
const t = useTestApp();
let receiver: Receiver;
const silent = pino({ level: "silent" });

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

const deps = (over: Partial<DeliverDeps> = {}): DeliverDeps => ({
  db: t.ctx.db,
  outbound: t.ctx.outbound,
  logger: silent,
  retryDelaysMs: TEST_RETRY_DELAYS_MS,
  ...over,
});

/**
 * A claimer in a "process" of its own: its own pool (its connections named, to be cut) and its
 * own outbound. `kill()` does what a SIGKILL does to it: nothing more is sent or written, and its
 * connections close (PostgreSQL rolls its claim back).
 */
function doomedClaimer() {
  const name = `doomed_${process.pid}_${Date.now()}`;
  const { db, pool } = createDatabase(t.database.url, 4, `-c application_name=${name}`);
  const outbound = new Outbound({ allowPrivate: true });
  const post = outbound.post.bind(outbound);
  let dead = false;
  outbound.post = (url, request) => (dead ? new Promise(() => {}) : post(url, request));
  const run = deliverDue(deps({ db, outbound })).catch(() => undefined);
  return {
    run,
    async kill() {
      dead = true;
      pool.connect = (() => Promise.reject(new Error("worker killed"))) as unknown as typeof pool.connect;
      await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${name}`.execute(
        t.ctx.db,
      );
      outbound.close();
    },
  };
}

describe("a claimer killed in the middle of its claim", () => {
  it("is followed by a claim that sends again only what was on the wire, and loses nothing", async () => {
    const count = CLAIM_SIZE;
    const { hook } = await accountWithLeadDeliveries(t, receiver, count);
    // A receiver answering in 20 ms: 16 attempts on the wire, about 800 a second.
    receiver.answers.push(...Array.from({ length: count * 2 }, () => ({ status: 200, delayMs: 20 })));

    const doomed = doomedClaimer();
    const killAt = Math.floor(count * 0.4);
    await receiver.waitForAt(hook.path, killAt, 20_000);
    await doomed.kill();
    const receivedAtKill = receiver.at(hook.path).length;
    // Its claim is released at once: the next claimer takes it.
    await deliverDue(deps());

    const got = receiver.at(hook.path).map((r) => r.event.id);
    const distinct = new Set(got);
    const resent = got.length - distinct.size;
    const rows = await t.ctx.db
      .selectFrom("integration_deliveries")
      .select(["event_id", "status", "attempt_count", "next_attempt_at", "status_code"])
      .where("integration_id", "=", hook.id)
      .execute();
    // Nothing lost: every delivery reached the receiver with its event id and is recorded once.
    expect(rows).toHaveLength(count);
    expect(distinct).toEqual(new Set(rows.map((r) => r.event_id)));
    for (const row of rows) {
      expect(row).toMatchObject({
        status: "success",
        attempt_count: 1,
        next_attempt_at: null,
        status_code: 200,
      });
    }
    // Sent again: at most what was on the wire at the kill (one claimer's lanes) and the answers
    // of the last few milliseconds, not the hundreds the claim had already sent.
    expect(receivedAtKill).toBeGreaterThanOrEqual(killAt);
    expect(resent).toBeLessThanOrEqual(SEND_CONCURRENCY * 2);
    const notesLeft = await sql<{ n: number }>`
      select count(*)::integer as n from integration_delivery_answers
      where delivery_id in (select id from integration_deliveries where integration_id = ${hook.id})`.execute(
      t.ctx.db,
    );
    expect(notesLeft.rows[0]!.n).toBe(0);
    console.log(`claim killed after ${receivedAtKill} of ${count} received: ${resent} sent again`);
  });

  it("leaves notes to the claims that record them; the minute's sweep removes those left for an hour", async () => {
    const base = 2_000_000_000;
    const note = (id: number) => ({ id, attemptCount: 0, statusCode: 200, latencyMs: 5, responseBody: "ok" });
    await noteAnswers(t.ctx.db, [note(base + 1), note(base + 2)]);
    await sql`update integration_delivery_answers set noted_at = now() - interval '61 minutes'
      where delivery_id = ${base + 1}`.execute(t.ctx.db);
    const task = deliveryTaskList(deps())[DELIVER_TASK]!;
    const left = async () =>
      (
        await sql<{ delivery_id: number }>`select delivery_id from integration_delivery_answers
          where delivery_id > ${base} order by delivery_id`.execute(t.ctx.db)
      ).rows.map((r) => r.delivery_id);
    // A wake-up job (no `_cron`) does not prune.
    await task({}, { logger: { info() {}, error() {} } } as never);
    expect(await left()).toEqual([base + 1, base + 2]);
    await task({ _cron: { ts: new Date().toISOString(), backfilled: false } }, {
      logger: { info() {}, error() {} },
    } as never);
    expect(await left()).toEqual([base + 2]);
  });

  it("notes the answers of all claimers together, a few milliseconds' worth per statement", async () => {
    const count = CLAIM_SIZE * 4;
    const { hook } = await accountWithLeadDeliveries(t, receiver, count);
    const writer = answerWriter(t.ctx.db, silent);
    const before = writer.statements;
    await Promise.all([deliverDue(deps()), deliverDue(deps()), deliverDue(deps()), deliverDue(deps())]);
    expect(receiver.at(hook.path)).toHaveLength(count);
    const statements = writer.statements - before;
    console.log(`${count} deliveries by 4 claimers: ${statements} note statements`);
    // At most one write per 5 ms for the whole process, not one per answer or per claimer.
    expect(statements).toBeGreaterThan(0);
    expect(statements).toBeLessThan(count / 8);
  });
});
