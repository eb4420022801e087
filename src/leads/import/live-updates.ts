import type { Db } from "../../db/database.js";
import { emitLeadEvents } from "../../events/outbox.js";
import { findLeadUpdateTargets, type LeadUpdateTarget } from "../../events/lead-updates.js";
import type { LeadEventSource } from "../../events/types.js";
import { blacklistedDomains, isLeadBlacklisted } from "../../export-blacklist/match.js";

/** Changed leads looked up per statement. */
const LOOKUP_CHUNK = 20_000;

/**
 * Live updates of an import, sent once its batches have committed: one `lead.updated` per changed
 * lead to each account that holds it and is subscribed, as one outbox row per account and source
 * (src/events/outbox.ts, emitLeadEvents; the worker expands it), leads on the account's export
 * blacklist left out. Answers how many lead events were written. Changed leads that nobody holds
 * (the usual case) cost one indexed lookup per chunk of 20,000.
 */
export async function sendImportLiveUpdates(
  db: Db,
  changed: { ids: readonly number[]; versions: readonly number[] },
): Promise<number> {
  const byAccount = new Map<number, LeadUpdateTarget[]>();
  for (let at = 0; at < changed.ids.length; at += LOOKUP_CHUNK) {
    const part = {
      ids: changed.ids.slice(at, at + LOOKUP_CHUNK),
      versions: changed.versions.slice(at, at + LOOKUP_CHUNK),
    };
    for (const target of await findLeadUpdateTargets(db, part)) {
      const list = byAccount.get(target.accountId) ?? [];
      list.push(target);
      byAccount.set(target.accountId, list);
    }
  }
  let sent = 0;
  for (const [accountId, targets] of byAccount) {
    const blacklist = await blacklistedDomains(db, accountId);
    const kept = targets.filter(
      (t) => !isLeadBlacklisted(blacklist, { registeredUrl: t.registeredUrl, crawledUrl: t.crawledUrl }),
    );
    const bySource = new Map<LeadEventSource, LeadUpdateTarget[]>();
    for (const t of kept) {
      const list = bySource.get(t.source) ?? [];
      list.push(t);
      bySource.set(t.source, list);
    }
    await db.transaction().execute(async (trx) => {
      for (const [source, leads] of bySource) {
        const written = await emitLeadEvents(trx, {
          accountId,
          type: "lead.updated",
          source,
          leads: leads.map((t) => ({ leadId: t.leadId, version: t.version })),
        });
        if (written) sent += leads.length;
      }
    });
  }
  return sent;
}
