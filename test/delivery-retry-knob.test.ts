import type { Runner } from "graphile-worker";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { emitEvent } from "../src/events/outbox.js";
import { RETRY_DELAYS_MS } from "../src/integrations/deliveries/schedule.js";
import { useTestApp } from "./helpers/app.js";
import { startDeliveryRunner } from "./helpers/delivery-runner.js";
import { buildAccount } from "./helpers/factories.js";
import { createWebhook, startReceiver, type Receiver } from "./helpers/webhook-receiver.js";

// `DELIVERY_RETRY_DELAYS_MS` (docs/integrations.md, README "Configuration"): the automatic
// delivery retry schedule, shortened for fault drills.

describe("DELIVERY_RETRY_DELAYS_MS", () => {
  it("leaves the production schedule in place when unset or empty", () => {
    // Unset: the delivery tasks take RETRY_DELAYS_MS (attempts.ts).
    expect(loadConfig({}).deliveryRetryDelaysMs).toBeUndefined();
    expect(loadConfig({ DELIVERY_RETRY_DELAYS_MS: "" }).deliveryRetryDelaysMs).toBeUndefined();
    expect(RETRY_DELAYS_MS).toEqual([
      5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 86_400_000,
    ]);
  });

  it("takes comma-separated whole milliseconds", () => {
    expect(
      loadConfig({ DELIVERY_RETRY_DELAYS_MS: "200,400,800,1600,3200,6400,12800" }).deliveryRetryDelaysMs,
    ).toEqual([200, 400, 800, 1600, 3200, 6400, 12800]);
    expect(loadConfig({ DELIVERY_RETRY_DELAYS_MS: " 50 , 60 " }).deliveryRetryDelaysMs).toEqual([50, 60]);
    expect(loadConfig({ DELIVERY_RETRY_DELAYS_MS: "1" }).deliveryRetryDelaysMs).toEqual([1]);
    expect(loadConfig({ DELIVERY_RETRY_DELAYS_MS: "604800000" }).deliveryRetryDelaysMs).toEqual([
      604_800_000,
    ]);
  });

  it.each(["0", "-5", "1.5", "abc", "200,,400", "200,", "1e3", "0x10", "604800001", "200;400", " , "])(
    "refuses to start with %j",
    (value) => {
      expect(() => loadConfig({ DELIVERY_RETRY_DELAYS_MS: value })).toThrow(
        /^DELIVERY_RETRY_DELAYS_MS must be comma-separated whole milliseconds from 1 to 604800000/,
      );
    },
  );
});

describe("a delivery worker on a short schedule", () => {
  const t = useTestApp();
  let receiver: Receiver;
  let runner: Runner | undefined;
  const delays = loadConfig({ DELIVERY_RETRY_DELAYS_MS: "300,600,900,1200" }).deliveryRetryDelaysMs!;

  beforeAll(async () => {
    receiver = await startReceiver();
    runner = await startDeliveryRunner(t.ctx, { retryDelaysMs: delays });
  });
  afterAll(async () => {
    await runner?.stop();
    await receiver?.close();
  });

  it("retries a failing receiver at those delays, then fails the delivery and needs attention", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const hook = await createWebhook(t, receiver, auth, ["lead.created"]);
    const attempts = delays.length + 1;
    receiver.answers.push(...Array.from({ length: attempts }, () => ({ status: 500, body: "down" })));
    await t.ctx.db
      .transaction()
      .execute((trx) => emitEvent(trx, { accountId, type: "lead.created", data: { drill: true } }));

    // Arrival times of the attempts (polled every 5 ms).
    const arrivals: number[] = [];
    const deadline = Date.now() + 20_000;
    while (arrivals.length < attempts && Date.now() < deadline) {
      const n = receiver.at(hook.path).length;
      while (arrivals.length < n) arrivals.push(performance.now());
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(arrivals).toHaveLength(attempts);
    const gaps = arrivals.slice(1).map((at, i) => at - arrivals[i]!);
    for (const [i, gap] of gaps.entries()) {
      // The delay, up to 10% jitter, plus the runner's 100 ms poll and a claim on a shared machine.
      expect(gap).toBeGreaterThanOrEqual(delays[i]! - 15);
      expect(gap).toBeLessThan(delays[i]! * 1.1 + 700);
    }
    const events = receiver.at(hook.path).map((d) => d.event.id);
    expect(new Set(events).size).toBe(1);

    // Schedule exhausted: the delivery failed after 5 attempts; 5 failures in a row: needs attention.
    const end = Date.now() + 5_000;
    let state: { status: string; attempt_count: number; next_attempt_at: Date | null; integration: string };
    do {
      await new Promise((r) => setTimeout(r, 50));
      const { rows } = await sql<typeof state>`
        select d.status, d.attempt_count, d.next_attempt_at, i.status as integration
        from integration_deliveries d join integrations i on i.id = d.integration_id
        where d.integration_id = ${hook.id}`.execute(t.ctx.db);
      state = rows[0]!;
    } while ((state.status !== "failed" || state.integration !== "needs_attention") && Date.now() < end);
    expect(state).toEqual({
      status: "failed",
      attempt_count: attempts,
      next_attempt_at: null,
      integration: "needs_attention",
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.at(hook.path)).toHaveLength(attempts);
  });
});
