/** Statuses of a run, in the order a run moves through them (docs/enrichments.md). */
export type RunStatus =
  "queued" | "matching" | "scraping" | "merging" | "delivering" | "completed" | "partial" | "failed";

export const FINAL_STATUSES: readonly RunStatus[] = ["completed", "partial", "failed"];

/** The status of one row of the result file. */
export type RowStatus =
  | "matched_paid"
  | "scraped"
  | "matched_free"
  | "scrape_failed"
  | "skipped_db_budget"
  | "skipped_scrape_budget"
  | "matched_no_contact"
  | "scraped_no_contact"
  | "skipped_invalid";

export type ContactTypes = "phone" | "email" | "either";

/** Where a row's data comes from, by its status (the file's `Source` column). */
export function sourceOf(status: RowStatus): "database" | "live_scrape" | "none" {
  if (status === "matched_paid" || status === "matched_free") return "database";
  if (status === "scraped") return "live_scrape";
  return "none";
}

/** Whether contacts satisfy the requested type. */
export function hasRequestedContact(
  contactTypes: ContactTypes,
  has: { phone: boolean; email: boolean },
): boolean {
  if (contactTypes === "phone") return has.phone;
  if (contactTypes === "email") return has.email;
  return has.phone || has.email;
}

/** One enrichment run (domain shape). Credits are in tenths. */
export interface EnrichmentRun {
  id: number;
  accountId: number;
  status: RunStatus;
  contactTypes: ContactTypes;
  databaseMatchPercent: number;
  maxCreditsTenths: number | null;
  limitTenths: number;
  emailResults: boolean;
  submittedCount: number;
  duplicatesRemoved: number;
  skippedInvalid: number;
  urlCount: number;
  processed: number;
  matchCursor: number;
  database: {
    matched: number;
    charged: number;
    free: number;
    skippedOverBudget: number;
    noRequestedContact: number;
  };
  live: {
    sentToScraper: number;
    delivered: number;
    failed: number;
    noRequestedContact: number;
    skippedOverBudget: number;
  };
  dbChargedTenths: number;
  liveChargedTenths: number;
  creditsFinal: boolean;
  resultRowCount: number;
  resultEntryId: number | null;
  endedEarly: boolean;
  error: string | null;
  createdAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
}

/**
 * The budget of new database matches: `databaseMatchPercent` of the limit, in whole credits
 * (a new match costs 1 credit).
 */
export function databaseBudgetTenths(
  run: Pick<EnrichmentRun, "limitTenths" | "databaseMatchPercent">,
): number {
  const share = Math.floor((run.limitTenths * run.databaseMatchPercent) / 100);
  return share - (share % 10);
}

/** What live results may still cost: the limit less what database matches were charged. */
export function liveBudgetTenths(run: Pick<EnrichmentRun, "limitTenths" | "dbChargedTenths">): number {
  return Math.max(0, run.limitTenths - run.dbChargedTenths);
}
