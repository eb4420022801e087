import { getAccountWithBalance } from "../../accounts/service.js";
import { chargeDelivery } from "../../credits/charge.js";
import { spendable } from "../../credits/spendable.js";
import { ApiError } from "../../http/errors.js";
import { recordDeliveredLeads } from "../../leads/versions.js";
import {
  findRowsToMatch,
  matchHosts,
  setRowOutcomes,
  updateLeasedRun,
  type CounterChanges,
  type RowOutcome,
} from "../repository.js";
import { databaseBudgetTenths, hasRequestedContact, type EnrichmentRun } from "../run.js";
import type { RunContext } from "./settings.js";

const LEAD_TENTHS = 10;

/**
 * Matches the next batch of the run's URLs against the lead database and charges it, in one
 * transaction under the run's lease (so a batch is matched and charged exactly once, also when a
 * worker dies halfway: its transaction rolls back and the batch is matched again):
 * - a match without the requested contact type: `matched_no_contact` (free, not delivered);
 * - a lead the account received before: `matched_free`;
 * - a new lead: `matched_paid` (1 credit) while the database budget (`databaseMatchPercent` of
 *   the limit) and the spendable balance pay for it, else `skipped_db_budget`;
 * - no match: left for live fetching.
 * Delivered leads are recorded in the lead export history (method `enrichment`) through
 * `chargeDelivery`, whose count of new entries is what is charged. Returns the run after the
 * batch, with status `scraping` once every URL was matched.
 */
export async function matchNextBatch(
  ctx: RunContext,
  run: EnrichmentRun,
  token: string,
): Promise<EnrichmentRun> {
  const rows = await findRowsToMatch(ctx.db, run.id, run.matchCursor, ctx.settings.matchBatch);
  if (rows.length === 0) return updateLeasedRun(ctx.db, run.id, token, {}, { status: "scraping" });
  const cursor = rows[rows.length - 1]?.position ?? run.matchCursor;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await ctx.db.transaction().execute(async (trx) => {
        // The lease check first: it locks the run row, so no other worker's step interleaves.
        const current = await updateLeasedRun(trx, run.id, token);
        const matches = await matchHosts(trx, run.accountId, rows);
        const balance = spendable((await getAccountWithBalance(trx, run.accountId)).balance).tenths;
        let room = Math.floor(
          Math.min(databaseBudgetTenths(current) - current.dbChargedTenths, balance) / LEAD_TENTHS,
        );
        const outcomes: RowOutcome[] = [];
        const paid: RowOutcome[] = [];
        const deliveredIds = new Set<number>();
        const counters: CounterChanges = { processed: 0 };
        for (const match of matches) {
          const base = { position: match.position, leadId: match.leadId };
          let outcome: RowOutcome;
          if (!hasRequestedContact(current.contactTypes, { phone: match.hasPhone, email: match.hasEmail })) {
            outcome = { ...base, status: "matched_no_contact" };
          } else if (match.received || deliveredIds.has(match.leadId)) {
            // Bought before, or earlier in this batch (two hosts of one lead).
            outcome = { ...base, status: "matched_free" };
          } else if (room > 0) {
            room -= 1;
            outcome = { ...base, status: "matched_paid", creditsTenths: LEAD_TENTHS };
            paid.push(outcome);
          } else {
            outcome = { ...base, status: "skipped_db_budget", leadId: match.leadId };
          }
          if (outcome.status === "matched_paid" || outcome.status === "matched_free")
            deliveredIds.add(match.leadId);
          outcomes.push(outcome);
        }
        const charged = await chargeDelivery(trx, {
          accountId: run.accountId,
          reason: "enrichment",
          reference: `enrichment:${run.id}`,
          entryWait: "unbounded",
          async deliver(t) {
            const inserted = await recordDeliveredLeads(t, {
              accountId: run.accountId,
              method: "enrichment",
              exportedAt: new Date(),
              leadIds: [...deliveredIds].sort((a, b) => a - b),
            });
            return { lead: inserted };
          },
        });
        // A concurrent delivery of the same lead to the account committed first: that lead was
        // not new after all (the history's unique key decided, and only `inserted` was charged).
        const paidCount = charged.tenths / LEAD_TENTHS;
        for (const outcome of paid.slice(paidCount)) {
          outcome.status = "matched_free";
          outcome.creditsTenths = 0;
        }
        const written = await setRowOutcomes(trx, run.id, outcomes);
        for (const outcome of written) {
          counters.processed = (counters.processed ?? 0) + 1;
          const key = (
            {
              matched_paid: "db_charged",
              matched_free: "db_free",
              skipped_db_budget: "db_skipped_budget",
              matched_no_contact: "db_no_contact",
            } as const
          )[outcome.status as "matched_paid" | "matched_free" | "skipped_db_budget" | "matched_no_contact"];
          counters[key] = (counters[key] ?? 0) + 1;
        }
        counters.db_matched = written.length;
        counters.db_charged_tenths = charged.tenths;
        return updateLeasedRun(trx, run.id, token, counters, { matchCursor: cursor });
      });
    } catch (err) {
      // 402: the balance was spent meanwhile; 429: another charge held the account. Both rolled
      // the batch back: match it again on the balance now.
      const retry = err instanceof ApiError && (err.status === 402 || err.status === 429) && attempt < 5;
      if (!retry) throw err;
    }
  }
}
