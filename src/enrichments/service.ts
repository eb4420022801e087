import { getAccountWithBalance } from "../accounts/service.js";
import { spendable } from "../credits/spendable.js";
import type { Db, DbOrTrx } from "../db/database.js";
import { unavailability } from "../export-history/entry.js";
import { fileUnavailable } from "../export-history/errors.js";
import { findEntry } from "../export-history/repository.js";
import { directFileLink, type LinkSigner } from "../export-history/service.js";
import { ApiError, errors } from "../http/errors.js";
import type { FileStorage } from "../storage/file-storage.js";
import { findEmailResultsSetting, findRun, insertRows, insertRun, listRuns, queueRun } from "./repository.js";
import { FINAL_STATUSES, type ContactTypes, type EnrichmentRun } from "./run.js";
import { MAX_UNIQUE_URLS, prepareUrls } from "./urls.js";

/** How long the link of `GET /enrichments/{id}/download` works. */
export const DOWNLOAD_LINK_MS = 5 * 60 * 1000;

/** The request of `POST /enrichments`, as the contract has checked it. */
export interface EnrichmentRequest {
  urls: string[];
  maxCredits?: number;
  databaseMatchPercent?: number;
  contactTypes?: ContactTypes;
  emailResults?: boolean;
}

/**
 * Starts a run: the URLs deduplicated by host (at most 100,000 remain, else 400
 * `invalid_request`), the run and its rows written and its processing queued in one
 * transaction. The credit limit is `maxCredits` (in tenths, rounded down), else the spendable
 * balance now. Nothing is charged here.
 */
export async function createEnrichmentRun(
  db: Db,
  accountId: number,
  request: EnrichmentRequest,
): Promise<EnrichmentRun> {
  const prepared = prepareUrls(request.urls);
  if (prepared.uniqueHosts > MAX_UNIQUE_URLS) {
    throw errors.invalidRequest(
      `At most ${MAX_UNIQUE_URLS.toLocaleString("en-US")} URLs after removing duplicates by host.`,
      [
        {
          path: ["body", "urls"],
          message: `${prepared.uniqueHosts} distinct hosts; at most ${MAX_UNIQUE_URLS} are allowed`,
        },
      ],
    );
  }
  const maxCreditsTenths =
    request.maxCredits === undefined ? null : Math.floor(request.maxCredits * 10 + 1e-9);
  const limitTenths =
    maxCreditsTenths ?? spendable((await getAccountWithBalance(db, accountId)).balance).tenths;
  const emailResults = request.emailResults ?? (await findEmailResultsSetting(db, accountId));
  return db.transaction().execute(async (trx) => {
    const run = await insertRun(trx, {
      accountId,
      contactTypes: request.contactTypes ?? "either",
      databaseMatchPercent: request.databaseMatchPercent ?? 100,
      maxCreditsTenths,
      limitTenths: Math.max(0, limitTenths),
      emailResults,
      submittedCount: prepared.submitted,
      duplicatesRemoved: prepared.duplicatesRemoved,
      skippedInvalid: prepared.skippedInvalid,
      urlCount: prepared.rows.length,
    });
    await insertRows(trx, run.id, prepared.rows);
    await queueRun(trx, run.id);
    return run;
  });
}

export async function getEnrichmentRun(db: DbOrTrx, accountId: number, id: number): Promise<EnrichmentRun> {
  const run = await findRun(db, accountId, id);
  if (!run) throw errors.notFound("Enrichment run not found.");
  return run;
}

export function listEnrichmentRuns(
  db: DbOrTrx,
  accountId: number,
  page: { limit: number; offset: number },
): Promise<{ runs: EnrichmentRun[]; totalCount: number }> {
  return listRuns(db, accountId, page);
}

/** Whether a run's result file is published. */
export function resultReady(run: EnrichmentRun): boolean {
  return (
    run.resultEntryId !== null &&
    (run.status === "completed" || run.status === "partial" || run.status === "delivering")
  );
}

/** A run's result link: the signed URL, when it stops working, and how many seconds that is. */
export interface ResultLink {
  url: string;
  expiresAt: Date;
  /** DOWNLOAD_LINK_MS in seconds (300), fewer when the file expires sooner. */
  expiresInSeconds: number;
}

/**
 * The 5-minute link to a run's result file: 404 for another account's run, 409
 * `result_not_ready` before the file is published (or for a failed run), 410 once it expired.
 */
export async function createResultLink(
  db: DbOrTrx,
  storage: FileStorage,
  signer: LinkSigner,
  accountId: number,
  id: number,
  now = new Date(),
): Promise<ResultLink> {
  const run = await getEnrichmentRun(db, accountId, id);
  if (!resultReady(run) || run.resultEntryId === null) {
    const why = FINAL_STATUSES.includes(run.status)
      ? "This run failed; it has no result file."
      : `The result file is not ready yet (status ${run.status}).`;
    throw new ApiError(409, "result_not_ready", why);
  }
  const entry = await findEntry(db, accountId, run.resultEntryId);
  if (!entry) throw fileUnavailable("missing");
  const reason = unavailability(entry, now, await storage.size(entry.storageKey));
  if (reason) throw fileUnavailable(reason);
  const link = await directFileLink(signer, storage, entry, DOWNLOAD_LINK_MS, now);
  // The link's expiry is kept in whole seconds; counted up, a fresh link says 300.
  const seconds = Math.ceil((link.expiresAt.getTime() - now.getTime()) / 1000);
  return { ...link, expiresInSeconds: Math.min(DOWNLOAD_LINK_MS / 1000, Math.max(0, seconds)) };
}
