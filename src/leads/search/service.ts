import { getAccountWithBalance } from "../../accounts/service.js";
import { chargeDelivery } from "../../credits/charge.js";
import { spendable, type Spendable } from "../../credits/spendable.js";
import type { Db } from "../../db/database.js";
import type { DeliveryChannel } from "../delivery-channel.js";
import { startLeadDelivery } from "../versions.js";
import { NO_CONTROLS, type SearchControls } from "./controls.js";
import type { SearchFilters } from "./filters.js";
import { withLeadQuerySlotReading } from "./capacity.js";
import type { SearchPageOptions } from "./query.js";
import { findPreviewPageJson, findSearchPageJson, type SearchPageJson } from "./repository.js";

/**
 * Where a search request runs: the search statement on the search pool (its connections carry the
 * search's settings, settings.ts), everything else on the main pool.
 */
export interface SearchDatabases {
  db: Db;
  searchDb: Db;
}

/** Where a page of results is. */
export interface Pagination {
  page: number;
  limit: number;
  total: number;
  pages: number;
}

/** A charged search: the page of leads (each as the API's Lead in JSON text) and what it cost. */
export interface SearchOutcome {
  leads: { id: number; json: string }[];
  pagination: Pagination;
  creditsUsedTenths: number;
  creditsRemainingTenths: number;
  /** New matches were left out because the balance (not `maxCredits`) could not pay for them. */
  capped: boolean;
}

/** A free preview: the page (each lead as the preview's lead in JSON text) and the counts. */
export interface PreviewOutcome {
  leads: { id: number; json: string }[];
  pagination: Pagination;
  totalMatches: number;
  newLeads: number;
  alreadyReceived: number;
  creditsRemainingTenths: number;
}

const pagination = (filters: SearchFilters, total: number): Pagination => ({
  page: filters.page,
  limit: filters.limit,
  total,
  pages: Math.ceil(total / filters.limit),
});

/** What the account can spend now (404 for an unknown account). */
async function spendableOf(db: Db, accountId: number): Promise<Spendable> {
  return spendable((await getAccountWithBalance(db, accountId)).balance);
}

/**
 * Runs `work` in one of the account's lead query slots (capacity.ts) with what the account can
 * spend, read while the slot is claimed.
 */
function inSlot<T>(dbs: SearchDatabases, accountId: number, work: (spendable: Spendable) => Promise<T>) {
  return withLeadQuerySlotReading(dbs.db, accountId, () => spendableOf(dbs.db, accountId), work);
}

/**
 * Credits the account can spend now, in tenths: the answer of a search or preview that runs no
 * query (no positive filter), without a lead query slot.
 */
export async function creditsRemainingTenths(db: Db, accountId: number): Promise<number> {
  return (await spendableOf(db, accountId)).tenths;
}

/**
 * The query options of a paid search: new leads capped at the smaller of `maxCredits` and the
 * `balance` (whole credits); new leads first when `maxCredits` or `maxResults` is given; only new
 * leads with `excludePurchased`; the page cut to `maxResults`.
 */
export function paidSearchOptions(
  accountId: number,
  controls: SearchControls,
  balance: number,
): SearchPageOptions & { cap: number } {
  return {
    accountId,
    cap: Math.min(controls.maxCredits ?? Infinity, balance),
    newFirst: controls.maxCredits !== null || controls.maxResults !== null,
    onlyNew: controls.excludePurchased,
    ...(controls.maxResults === null ? {} : { take: controls.maxResults }),
  };
}

/**
 * A paid search (`GET /leads`). The result list holds every matching lead the account already
 * received (free, the sticky rule) and, of the new ones, only as many as the call may spend: the
 * smaller of `maxCredits` and the spendable balance, first in sort order. Without `maxCredits` and
 * `maxResults` the list is in sort order; with either, its new leads come first (credit-optimized
 * order, docs/leads.md). `total` counts that list and the page is cut from it, then cut to
 * `maxResults`. `excludePurchased` leaves the received leads out of the list. Each new lead on the
 * page costs 1 credit; every lead on the page is recorded in the lead export history (method
 * `api`, or `dashboard` from a session; snapshot), in the transaction of the ledger charge
 * (chargeDelivery, src/credits/charge.ts), and the entries decide which leads are new: 402 `insufficient_credits` when a concurrent
 * request spent the balance meanwhile, 429 `charge_in_progress` when the entries or the credit
 * lock are not free within 2 seconds. It runs in one of the account's lead query slots
 * (capacity.ts), whose claim the balance is read beside.
 */
export async function searchLeads(
  dbs: SearchDatabases,
  accountId: number,
  filters: SearchFilters,
  controls: SearchControls = NO_CONTROLS,
  method: DeliveryChannel = "api",
): Promise<SearchOutcome> {
  return inSlot(dbs, accountId, (spendable) =>
    searchWithin(dbs, accountId, filters, controls, spendable.leads, method),
  );
}

/**
 * searchLeads within its slot, with `balance` whole credits to spend. The charge's transaction
 * starts while the search statement runs (on the other pool): its lock timeout, the lead version
 * lock and the subscribed event types (startLeadDelivery) are taken meanwhile, and the entries are
 * recorded once the page is known.
 */
async function searchWithin(
  dbs: SearchDatabases,
  accountId: number,
  filters: SearchFilters,
  controls: SearchControls,
  balance: number,
  method: DeliveryChannel,
): Promise<SearchOutcome> {
  const { db, searchDb } = dbs;
  const options = paidSearchOptions(accountId, controls, balance);
  const cap = options.cap;
  let found: SearchPageJson | undefined;
  // The search's connection is taken first, so a process opens at most as many early charge
  // transactions (main pool) as it runs searches (search pool).
  const charge = await searchDb.connection().execute(async (searchConnection) => {
    const searching = findSearchPageJson(searchConnection, filters, options);
    // Awaited in the transaction; a search that fails before that is not an unhandled rejection.
    searching.catch(() => undefined);
    try {
      // A client waits on this answer: waiting for a concurrent delivery's entries is bounded too.
      return await db.transaction().execute((trx) =>
        chargeDelivery(trx, {
          accountId,
          reason: "lead_search",
          reference: "search",
          entryWait: "bounded",
          deliver: async (trx, creditLock) => {
            const delivery = await startLeadDelivery(trx, { accountId, method });
            found = await searching;
            const ids = found.page.map((lead) => lead.id);
            // The entries and then the credit lock, in one statement.
            return { lead: await delivery.record(ids, new Date(), creditLock) };
          },
        }),
      );
    } catch (err) {
      // The search statement ends before its connection and the slot are given back.
      await searching.catch(() => undefined);
      throw err;
    }
  });
  if (!found) throw new Error("the charge ended without the search");

  const receivedMatches = found.totalMatches - found.newMatches;
  const total = receivedMatches + Math.min(found.newMatches, cap);
  return {
    leads: found.page,
    pagination: pagination(filters, total),
    creditsUsedTenths: charge.tenths,
    creditsRemainingTenths: charge.remainingTenths,
    // Only the balance's cut: a cut by maxCredits is what the client asked for.
    capped: Math.min(found.newMatches, controls.maxCredits ?? Infinity) > balance,
  };
}

/**
 * A free preview (`GET /leads/preview`): counts over every match (new vs already received, the
 * cost of exporting them) and one page of all matches in sort order, masked unless the account
 * received them; nothing charged or recorded. `excludePurchased` leaves the received leads out of
 * the matches before anything is counted or paged. It runs in one of the account's lead query
 * slots (capacity.ts), whose claim the balance is read beside.
 */
export async function previewLeads(
  dbs: SearchDatabases,
  accountId: number,
  filters: SearchFilters,
  controls: SearchControls = NO_CONTROLS,
): Promise<PreviewOutcome> {
  return inSlot(dbs, accountId, (spendable) =>
    previewWithin(dbs, accountId, filters, controls, spendable.tenths),
  );
}

/** previewLeads within its slot. */
async function previewWithin(
  dbs: SearchDatabases,
  accountId: number,
  filters: SearchFilters,
  controls: SearchControls,
  creditsRemainingTenths: number,
): Promise<PreviewOutcome> {
  const found = await findPreviewPageJson(dbs.searchDb, filters, {
    accountId,
    cap: null,
    onlyNew: controls.excludePurchased,
  });
  return {
    leads: found.page,
    pagination: pagination(filters, found.totalMatches),
    totalMatches: found.totalMatches,
    newLeads: found.newMatches,
    alreadyReceived: found.totalMatches - found.newMatches,
    creditsRemainingTenths,
  };
}
