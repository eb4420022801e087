import type { Db, Trx } from "../../db/database.js";
import { emitLeadEvents } from "../../events/outbox.js";
import { findLeadUpdateTargets, type LeadUpdateTarget } from "../../events/lead-updates.js";
import type { LeadEventSource } from "../../events/types.js";
import { blacklistedDomains, isLeadBlacklisted } from "../../export-blacklist/match.js";
import { takeQueuedLiveUpdates } from "./live-updates-queue.js";

/** Queued import batches taken per transaction (about 20,000 changed leads at the default batch size). */
const BATCHES_PER_ROUND = 20;

/**
 * Sends the queued live updates of imports (`lead_live_updates`, written by the statement that
 * changed the leads): one `lead.updated` per changed lead to each account that holds it and is
 * subscribed, as one outbox row per account and source (src/events/outbox.ts, emitLeadEvents; the
 * worker expands it), leads on the account's export blacklist left out. Each round takes queued
 * batches (`for update skip locked`, so any number of importers and workers can drain at once),
 * writes the outbox rows and deletes the batches in one transaction: a crash before the commit
 * leaves them queued, one after it has sent them; nothing is lost or sent twice. `queuedBefore`
 * limits the drain to older batches (the worker's sweep of batches a crashed import left).
 * Answers how many lead events were written.
 */
export async function sendQueuedLiveUpdates(db: Db, options: { queuedBefore?: Date } = {}): Promise<number> {
  let sent = 0;
  for (;;) {
    const round = await db.transaction().execute(async (trx) => {
      const changed = await takeQueuedLiveUpdates(trx, BATCHES_PER_ROUND, options.queuedBefore);
      if (changed === null) return null;
      return sendLiveUpdates(trx, changed);
    });
    if (round === null) return sent;
    sent += round;
  }
}

/** The live updates of changed leads (`ids` and `versions` parallel), written in the caller's transaction. */
async function sendLiveUpdates(
  trx: Trx,
  changed: { ids: readonly number[]; versions: readonly number[] },
): Promise<number> {
  const byAccount = new Map<number, LeadUpdateTarget[]>();
  for (const target of await findLeadUpdateTargets(trx, changed)) {
    const list = byAccount.get(target.accountId) ?? [];
    list.push(target);
    byAccount.set(target.accountId, list);
  }
  let sent = 0;
  for (const [accountId, targets] of byAccount) {
    const blacklist = await blacklistedDomains(trx, accountId);
    const bySource = new Map<LeadEventSource, LeadUpdateTarget[]>();
    for (const t of targets) {
      if (isLeadBlacklisted(blacklist, { registeredUrl: t.registeredUrl, crawledUrl: t.crawledUrl }))
        continue;
      const list = bySource.get(t.source) ?? [];
      list.push(t);
      bySource.set(t.source, list);
    }
    for (const [source, leads] of bySource) {
      const written = await emitLeadEvents(trx, {
        accountId,
        type: "lead.updated",
        source,
        leads: leads.map((t) => ({ leadId: t.leadId, version: t.version })),
      });
      if (written) sent += leads.length;
    }
  }
  return sent;
}
