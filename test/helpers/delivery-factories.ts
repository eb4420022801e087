import { dispatchAccountEvents } from "../../src/integrations/deliveries/dispatch.js";
import { recordDeliveredLeads } from "../../src/leads/versions.js";
import type { TestApp } from "./app.js";
import { buildAccount } from "./factories.js";
import { buildLeads } from "./leads-factories.js";
import { createWebhook, type Receiver } from "./webhook-receiver.js";

/**
 * A new account with a `lead.created` webhook on the receiver and `count` new leads delivered to
 * it (their events in the outbox), dispatched into deliveries unless `dispatch` is false.
 */
export async function accountWithLeadDeliveries(
  t: TestApp,
  receiver: Receiver,
  count: number,
  options: { dispatch?: boolean } = {},
) {
  const { accountId, auth } = await buildAccount(t.ctx.db);
  const hook = await createWebhook(t, receiver, auth, ["lead.created"]);
  const leadIds = await buildLeads(t.ctx.db, count, () => ({}));
  await t.ctx.db
    .transaction()
    .execute((trx) =>
      recordDeliveredLeads(trx, { accountId, method: "api", exportedAt: new Date(), leadIds }),
    );
  if (options.dispatch ?? true) await dispatchAccountEvents(t.ctx.db, accountId);
  return { accountId, auth, hook, leadIds };
}
