import type { Runner } from "graphile-worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAILURES_BEFORE_ATTENTION } from "../src/integrations/deliveries/schedule.js";
import { recordDeliveredLeads } from "../src/leads/versions.js";
import { startReceiver, type Receiver } from "../scripts/faults/receiver.js";
import { useTestApp } from "./helpers/app.js";
import { startDeliveryRunner } from "./helpers/delivery-runner.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLeads } from "./helpers/leads-factories.js";

// The CI part of fault scenario 4 (docs/reliability.md, `npm run faults -- receiver-faults` runs
// it with hanging receivers too): a webhook receiver answering 500 is retried on the retry
// schedule (each gap at least its delay, at most that with its 10% jitter plus the wake-up's
// slack), its integration is `needs_attention` after FAILURES_BEFORE_ATTENTION failed attempts and
// nothing more is sent to it, while another account's healthy integration gets every event at once.

const t = useTestApp();
/** A short schedule whose delays differ by a second, so an attempt taken a step early shows. */
const DELAYS = [500, 1_500, 2_500, 3_500, 4_500, 5_500, 6_500];
/**
 * How late an attempt may be: the runner polls every 100 ms, and in CI this file shares 2 cores
 * with the rest of the suite (a gap measured 2.8 s over its delay on a loaded machine).
 */
const SLACK_MS = 2_500;
let receiver: Receiver;
let runner: Runner | undefined;

beforeAll(async () => {
  receiver = await startReceiver();
  receiver.answer = (path) => (path.startsWith("/bad") ? { status: 500 } : { status: 200 });
  runner = await startDeliveryRunner(t.ctx, { retryDelaysMs: DELAYS });
});
afterAll(async () => {
  await runner?.stop();
  await receiver?.close();
});

async function webhook(auth: { Authorization: string }, path: string): Promise<number> {
  const res = await t
    .request()
    .post("/api/v1/integrations/webhook")
    .set(auth)
    .send({
      provider: "generic_webhook",
      displayName: `faults ${path}`,
      targetUrl: receiver.url(path),
      events: ["lead.created"],
    })
    .expect(201);
  receiver.setSecret(path, res.body.data.signingSecret as string);
  return res.body.data.integration.id as number;
}

/** `count` new leads delivered to the account: `lead.created` events through the outbox. */
async function deliverLeads(accountId: number, count: number): Promise<void> {
  const leadIds = await buildLeads(t.ctx.db, count, () => ({}));
  await t.ctx.db
    .transaction()
    .execute((trx) =>
      recordDeliveredLeads(trx, { accountId, method: "api", exportedAt: new Date(), leadIds }),
    );
}

const eventsAt = (path: string) => [...receiver.received.events.values()].filter((e) => e.path === path);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a webhook receiver answering 500 (fault scenario 4)", () => {
  it(
    "is retried on the schedule, needs attention after the documented failures, and does not hold back the others",
    { timeout: 90_000 },
    async () => {
      const bad = await buildAccount(t.ctx.db);
      const good = await buildAccount(t.ctx.db);
      const badId = await webhook(bad.auth, "/bad");
      await webhook(good.auth, "/ok");

      await deliverLeads(bad.accountId, 1);
      const emitted: number[] = [];
      let status = "";
      const deadline = Date.now() + 40_000;
      while (status !== "needs_attention" && Date.now() < deadline) {
        emitted.push(Date.now());
        await deliverLeads(good.accountId, 1);
        await sleep(250);
        const res = await t.request().get(`/api/v1/integrations/${badId}`).set(bad.auth).expect(200);
        status = res.body.data.status as string;
      }
      expect(status).toBe("needs_attention");
      // Longer than the next retry would have waited: nothing more is sent to it.
      await sleep(DELAYS[FAILURES_BEFORE_ATTENTION - 1]! * 1.1 + SLACK_MS);

      const [event, ...others] = eventsAt("/bad");
      expect(others).toEqual([]);
      expect(event!.at).toHaveLength(FAILURES_BEFORE_ATTENTION);
      const gaps = event!.at.slice(1).map((at, n) => at - event!.at[n]!);
      gaps.forEach((gap, n) => {
        expect(gap, `gaps ${gaps.join(", ")} ms`).toBeGreaterThanOrEqual(DELAYS[n]! - 20);
        expect(gap, `gaps ${gaps.join(", ")} ms`).toBeLessThanOrEqual(DELAYS[n]! * 1.1 + SLACK_MS);
      });
      const integration = await t.request().get(`/api/v1/integrations/${badId}`).set(bad.auth).expect(200);
      expect(integration.body.data).toMatchObject({
        status: "needs_attention",
        consecutiveFailures: FAILURES_BEFORE_ATTENTION,
      });

      // The healthy integration got every event meanwhile, each within the slack of its lead.
      await sleep(1_000);
      const healthy = eventsAt("/ok").sort((a, b) => a.firstAt - b.firstAt);
      expect(healthy).toHaveLength(emitted.length);
      healthy.forEach((e, i) => {
        expect(e.count).toBe(1);
        expect(e.firstAt - emitted[i]!).toBeLessThan(SLACK_MS);
      });
      expect(receiver.received.badSignatures).toBe(0);
    },
  );
});
