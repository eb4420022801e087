import { sql } from "kysely";
import type { Runner } from "graphile-worker";
import { afterAll, beforeAll, expect, it } from "vitest";
import { wakeClaimerAt } from "../src/integrations/deliveries/repository.js";
import { useTestApp } from "./helpers/app.js";
import { accountWithLeadDeliveries } from "./helpers/delivery-factories.js";
import { startDeliveryRunner } from "./helpers/delivery-runner.js";
import { startReceiver, type Receiver } from "./helpers/webhook-receiver.js";

// Wake-ups of the delivery claimers (docs/events.md "The delivery queue"): one job per second of
// due time keeps the earliest time asked for in that second, so a delivery due later in the same
// second must still be sent on time, not by the minute's sweep (found by the fault suite's
// receiver-faults scenario, docs/reliability.md).
const t = useTestApp();
let receiver: Receiver;
let runner: Runner | undefined;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await runner?.stop();
  await receiver?.close();
});

it("sends a delivery due late in a second whose wake-up job was asked for earlier in that second", async () => {
  const { hook } = await accountWithLeadDeliveries(t, receiver, 2);
  const ids = (
    await t.ctx.db
      .selectFrom("integration_deliveries")
      .select("id")
      .where("integration_id", "=", hook.id)
      .orderBy("id")
      .execute()
  ).map((r) => r.id);
  expect(ids).toHaveLength(2);
  // Only the two wake-ups below: the dispatch's own wake-up would send both at once.
  await sql`delete from graphile_worker._private_jobs`.execute(t.ctx.db);
  const second = Math.ceil(Date.now() / 1000) + 2;
  const early = new Date(second * 1000 + 100);
  const late = new Date(second * 1000 + 900);
  for (const [id, due] of [
    [ids[0]!, early],
    [ids[1]!, late],
  ] as const) {
    await t.ctx.db
      .updateTable("integration_deliveries")
      .set({ next_attempt_at: due })
      .where("id", "=", id)
      .execute();
    await wakeClaimerAt(t.ctx.db, due);
  }
  // One job for the second, at the earliest time asked for.
  const jobs = await sql<{ run_at: Date }>`select run_at from graphile_worker._private_jobs`.execute(
    t.ctx.db,
  );
  expect(jobs.rows.map((j) => j.run_at.getTime())).toEqual([early.getTime()]);

  runner = await startDeliveryRunner(t.ctx);
  await new Promise((r) => setTimeout(r, second * 1000 + 4_000 - Date.now()));
  const rows = await t.ctx.db
    .selectFrom("integration_deliveries")
    .select(["status"])
    .where("integration_id", "=", hook.id)
    .execute();
  expect(rows.map((r) => r.status)).toEqual(["success", "success"]);
  expect(receiver.at(hook.path)).toHaveLength(2);
});
