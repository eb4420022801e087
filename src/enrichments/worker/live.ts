import { setMaxListeners } from "node:events";
import { crawlSite, type CrawlResult } from "../crawler/crawl-site.js";
import {
  findRowsToFetch,
  markPendingRows,
  setRowOutcomes,
  updateLeasedRun,
  type CounterChanges,
  type RowOutcome,
} from "../repository.js";
import { hasRequestedContact, liveBudgetTenths, type EnrichmentRun } from "../run.js";
import { fetchableUrl } from "../urls.js";
import type { RunContext } from "./settings.js";

/** A live result costs 0.1 credit: one tenth. */
const LIVE_TENTHS = 1;
/** Outcomes written per transaction (or sooner, every second). */
const FLUSH_ROWS = 100;
const FLUSH_MS = 1_000;

/** The outcome of one fetched site. */
function outcomeOf(run: EnrichmentRun, position: number, result: CrawlResult): RowOutcome {
  if (!result.ok) return { position, status: "scrape_failed", contacts: { error: result.reason } };
  const { contacts } = result;
  const wanted = hasRequestedContact(run.contactTypes, {
    phone: contacts.phones.length > 0,
    email: contacts.emails.length > 0,
  });
  return wanted
    ? { position, status: "scraped", creditsTenths: LIVE_TENTHS, contacts: { ...contacts } }
    : { position, status: "scraped_no_contact", contacts: { ...contacts } };
}

const COUNTER_OF = {
  scraped: "live_delivered",
  scrape_failed: "live_failed",
  scraped_no_contact: "live_no_contact",
} as const;

/**
 * Fetches the run's remaining URLs live for one slice (`sliceMs`), `liveConcurrency` sites at a
 * time, writing outcomes in small transactions under the lease (a crash loses at most the sites
 * in flight, which are fetched again). Live results are not charged here but when the file is
 * published; the run's live budget (its limit less the database charge) caps how many results
 * with the requested contact type are sought: once reached, the URLs left are
 * `skipped_scrape_budget` without being fetched. Past the run's time limit the URLs left are
 * `scrape_failed` and the run will end `partial`. Returns the run, `merging` when nothing is left.
 */
export async function scrapeSlice(
  ctx: RunContext,
  run: EnrichmentRun,
  token: string,
): Promise<EnrichmentRun> {
  const { settings } = ctx;
  const sliceEnd = Date.now() + settings.sliceMs;
  const startedAt = run.startedAt?.getTime() ?? Date.now();
  const budget = Math.floor(liveBudgetTenths(run) / LIVE_TENTHS);
  let current = run;
  let found = run.live.delivered;
  let inFlight = 0;
  let cursor = -1;
  let exhausted = false;
  const pending: RowOutcome[] = [];
  let lastFlush = Date.now();

  const flush = async () => {
    if (pending.length === 0) return;
    const batch = pending.splice(0, pending.length);
    current = await ctx.db.transaction().execute(async (trx) => {
      await updateLeasedRun(trx, run.id, token);
      const written = await setRowOutcomes(trx, run.id, batch);
      const counters: CounterChanges = { processed: written.length, live_sent: written.length };
      for (const outcome of written) {
        const key = COUNTER_OF[outcome.status as keyof typeof COUNTER_OF];
        counters[key] = (counters[key] ?? 0) + 1;
      }
      return updateLeasedRun(trx, run.id, token, counters);
    });
    lastFlush = Date.now();
  };

  const overTime = () => Date.now() - startedAt >= settings.liveTimeLimitMs;
  const queue: { position: number; submittedUrl: string }[] = [];
  // One read at a time: fetchers that find the queue empty together wait for the same read.
  let reading: Promise<void> | null = null;
  const refill = async () => {
    while (queue.length === 0 && !exhausted) {
      reading ??= findRowsToFetch(ctx.db, run.id, cursor, settings.liveConcurrency * 4).then((rows) => {
        if (rows.length === 0) exhausted = true;
        for (const row of rows) queue.push(row);
        cursor = rows[rows.length - 1]?.position ?? cursor;
        reading = null;
      });
      await reading;
    }
  };

  const abort = new AbortController();
  // Every site in flight listens to it (and each of its page reads).
  setMaxListeners(0, abort.signal);
  const worker = async () => {
    for (;;) {
      if (Date.now() >= sliceEnd || overTime() || found + inFlight >= budget) return;
      await refill();
      const row = queue.shift();
      if (!row) return;
      inFlight += 1;
      let result: CrawlResult;
      try {
        result = await crawlSite(
          ctx.outbound,
          ctx.gate,
          fetchableUrl(row.submittedUrl),
          settings.crawl,
          abort.signal,
        );
      } catch (err) {
        result = {
          ok: false,
          reason: err instanceof Error ? err.message.slice(0, 200) : "could not be read",
        };
      } finally {
        inFlight -= 1;
      }
      const outcome = outcomeOf(run, row.position, result);
      if (outcome.status === "scraped") found += 1;
      pending.push(outcome);
      if (pending.length >= FLUSH_ROWS || Date.now() - lastFlush >= FLUSH_MS) await flush();
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, settings.liveConcurrency) }, worker));
  } finally {
    abort.abort();
  }
  await flush();

  if (overTime()) {
    return ctx.db.transaction().execute(async (trx) => {
      await updateLeasedRun(trx, run.id, token);
      const left = await markPendingRows(trx, run.id, "scrape_failed");
      return updateLeasedRun(
        trx,
        run.id,
        token,
        { processed: left, live_failed: left },
        {
          status: "merging",
          endedEarly: left > 0,
          error: left > 0 ? `Live fetching reached its time limit; ${left} URLs were not fetched.` : null,
        },
      );
    });
  }
  if (found >= budget) {
    return ctx.db.transaction().execute(async (trx) => {
      await updateLeasedRun(trx, run.id, token);
      const left = await markPendingRows(trx, run.id, "skipped_scrape_budget");
      return updateLeasedRun(
        trx,
        run.id,
        token,
        { processed: left, live_skipped_budget: left },
        { status: "merging" },
      );
    });
  }
  if (exhausted && queue.length === 0) {
    // Every row has an outcome once nothing is pending (a row whose fetch another slice started is
    // pending until written).
    const rest = await findRowsToFetch(ctx.db, run.id, -1, 1);
    if (rest.length === 0) return updateLeasedRun(ctx.db, run.id, token, {}, { status: "merging" });
  }
  return current;
}
