import { getAccountWithBalance } from "../../accounts/service.js";
import { chargeDelivery } from "../../credits/charge.js";
import { spendable, type Spendable } from "../../credits/spendable.js";
import type { Db } from "../../db/database.js";
import type { LeadRecord } from "../lead.js";
import { recordDeliveredLeads } from "../versions.js";
import type { SearchFilters } from "./filters.js";
import { findSearchPage, type SearchPage, tuneSearch } from "./repository.js";

/** Longest a search query with many terms may run (well below the query slot's lifetime). */
export const SEARCH_STATEMENT_TIMEOUT_MS = 60_000;
/**
 * Up to this many terms a search runs without a statement timeout; with more, its cost grows with
 * the number of terms times the rows it has to check, and a timeout bounds it.
 */
export const TERMS_WITHOUT_TIMEOUT = 20;

/** Where a page of results is. */
export interface Pagination {
  page: number;
  limit: number;
  total: number;
  pages: number;
}

/** A charged search: the page of leads and what it cost. */
export interface SearchOutcome {
  leads: LeadRecord[];
  pagination: Pagination;
  creditsUsedTenths: number;
  creditsRemainingTenths: number;
  /** New matches were left out because the balance could not pay for them. */
  capped: boolean;
}

/** A free preview: the page (with which leads the account owns) and the counts. */
export interface PreviewOutcome {
  leads: { lead: LeadRecord; received: boolean }[];
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

function termCount(filters: SearchFilters): number {
  const columnTerms = [...Object.values(filters.includeTerms), ...Object.values(filters.excludeTerms)];
  return (
    filters.positiveKeywords.length +
    filters.negativeKeywords.length +
    columnTerms.reduce((n, terms) => n + (terms?.length ?? 0), 0)
  );
}

/**
 * Runs the search query in a transaction with the search's settings (tuneSearch); one with many
 * terms also bounded by a statement timeout.
 */
async function runSearch(
  db: Db,
  filters: SearchFilters,
  options: { accountId: number; cap: number | null },
): Promise<SearchPage> {
  return db.transaction().execute(async (trx) => {
    await tuneSearch(trx, termCount(filters) > TERMS_WITHOUT_TIMEOUT ? SEARCH_STATEMENT_TIMEOUT_MS : null);
    return findSearchPage(trx, filters, options);
  });
}

/**
 * A paid search (`GET /leads`). The results are capped at the spendable balance: every matching
 * lead the account already received stays (free, the sticky rule), and of the new ones only as
 * many as the balance pays for, first in sort order; `total` counts that capped list and the page
 * is cut from it. Each new lead on the page costs 1 credit; every lead on the page is recorded in
 * the lead export history (method `api`, snapshot), in the transaction of the ledger charge
 * (chargeDelivery, src/credits/charge.ts), and the entries decide which leads are new: 402
 * `insufficient_credits` when a concurrent request spent the balance meanwhile, 429
 * `charge_in_progress` when the entries or the credit lock are not free within 2 seconds. The
 * caller holds a lead query slot (capacity.ts).
 */
export async function searchLeads(db: Db, accountId: number, filters: SearchFilters): Promise<SearchOutcome> {
  const cap = (await spendableOf(db, accountId)).leads;
  const found = await runSearch(db, filters, { accountId, cap });
  const receivedMatches = found.totalMatches - found.newMatches;
  const total = receivedMatches + Math.min(found.newMatches, cap);
  const leads = found.page.map((p) => p.lead);

  // A client waits on this answer: waiting for a concurrent delivery's entries is bounded too.
  const charge = await db.transaction().execute((trx) =>
    chargeDelivery(trx, {
      accountId,
      reason: "lead_search",
      reference: "search",
      entryWait: "bounded",
      deliver: async (trx) => ({
        lead: await recordDeliveredLeads(trx, {
          accountId,
          method: "api",
          exportedAt: new Date(),
          leadIds: leads.map((lead) => lead.id),
        }),
      }),
    }),
  );

  return {
    leads,
    pagination: pagination(filters, total),
    creditsUsedTenths: charge.tenths,
    creditsRemainingTenths: charge.remainingTenths,
    capped: found.newMatches > cap,
  };
}

/**
 * A free preview (`GET /leads/preview`): counts over every match (new vs already received, the
 * cost of exporting them) and one page of all matches; nothing charged or recorded. The caller
 * holds a lead query slot (capacity.ts).
 */
export async function previewLeads(
  db: Db,
  accountId: number,
  filters: SearchFilters,
): Promise<PreviewOutcome> {
  const creditsRemainingTenths = (await spendableOf(db, accountId)).tenths;
  const found = await runSearch(db, filters, { accountId, cap: null });
  return {
    leads: found.page,
    pagination: pagination(filters, found.totalMatches),
    totalMatches: found.totalMatches,
    newLeads: found.newMatches,
    alreadyReceived: found.totalMatches - found.newMatches,
    creditsRemainingTenths,
  };
}
