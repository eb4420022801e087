import { findAccount } from "../../accounts/repository.js";
import { getAccountWithBalance } from "../../accounts/service.js";
import { chargeDelivery } from "../../credits/charge.js";
import { fromTenths } from "../../credits/ledger.js";
import { spendable } from "../../credits/spendable.js";
import { FILE_LIFETIME_DAYS } from "../../export-history/entry.js";
import { insertEntries } from "../../export-history/repository.js";
import { ApiError } from "../../http/errors.js";
import { enqueueMail } from "../../mail/queue.js";
import { capScrapedRows, updateLeasedRun } from "../repository.js";
import { liveBudgetTenths, type EnrichmentRun } from "../run.js";
import { directFileLink } from "../../export-history/service.js";
import { writeResultFile } from "./result-file.js";
import type { RunContext } from "./settings.js";

const LIVE_TENTHS = 1;
const DAY_MS = 24 * 60 * 60 * 1000;
/** A result file up to this size is attached to the e-mail; a larger one only linked. */
const MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024;

/**
 * Publishes the result file and charges the live results (`merging` -> `delivering`):
 * 1. the `scraped` rows the live budget or the balance now cannot pay become
 *    `skipped_scrape_budget` (in position order, the first ones kept);
 * 2. the CSV is written to storage (streamed; rewritten whole if this step runs again);
 * 3. in one transaction under the lease: the file recorded as an export history entry and the
 *    live results charged through `chargeDelivery` (0.1 credit each), the run `delivering` with
 *    its credits final. A 402 / 429 (the balance was spent meanwhile) starts again at 1.
 */
export async function publishResult(
  ctx: RunContext,
  run: EnrichmentRun,
  token: string,
): Promise<EnrichmentRun> {
  for (let attempt = 1; ; attempt += 1) {
    const capped = await ctx.db.transaction().execute(async (trx) => {
      const current = await updateLeasedRun(trx, run.id, token);
      const balance = spendable((await getAccountWithBalance(trx, run.accountId)).balance).tenths;
      const keep = Math.floor(Math.min(liveBudgetTenths(current), balance) / LIVE_TENTHS);
      const moved = await capScrapedRows(trx, run.id, Math.max(0, keep));
      return updateLeasedRun(trx, run.id, token, { live_delivered: -moved, live_skipped_budget: moved });
    });
    const createdAt = new Date();
    const fileName = `enrichment-${run.id}-${createdAt.toISOString().slice(0, 10)}.csv`;
    const exportId = `enrichment-${run.id}`;
    const storageKey = `exports/${run.accountId}/${exportId}/${fileName}`;
    const { size } = await writeResultFile(ctx.db, ctx.storage, run.id, storageKey);
    try {
      return await ctx.db.transaction().execute(async (trx) => {
        await updateLeasedRun(trx, run.id, token);
        let entryId = 0;
        const charged = await chargeDelivery(trx, {
          accountId: run.accountId,
          reason: "enrichment",
          reference: `enrichment:${run.id}`,
          entryWait: "unbounded",
          async deliver(t) {
            const [entry] = await insertEntries(t, run.accountId, [
              {
                exportId,
                fileName,
                fileType: "csv",
                leadCount: capped.urlCount,
                fileSize: size,
                formatName: null,
                exportMethod: "api",
                partNumber: null,
                isTotal: false,
                storageKey,
                createdAt,
                expiresAt: new Date(createdAt.getTime() + FILE_LIFETIME_DAYS * DAY_MS),
              },
            ]);
            entryId = entry?.id ?? 0;
            return { enrichmentLiveFetch: capped.live.delivered };
          },
        });
        return updateLeasedRun(
          trx,
          run.id,
          token,
          { live_charged_tenths: charged.tenths },
          {
            status: "delivering",
            creditsFinal: true,
            resultEntryId: entryId,
            resultRowCount: capped.urlCount,
          },
        );
      });
    } catch (err) {
      const retry = err instanceof ApiError && (err.status === 402 || err.status === 429) && attempt < 5;
      if (!retry) throw err;
    }
  }
}

/**
 * Ends a published run (`delivering` -> `completed`, or `partial` when live fetching ran out of
 * time): the results e-mail queued in the same transaction when `emailResults` is on (the file
 * attached when it is small, and a link valid 7 days).
 */
export async function finishRun(ctx: RunContext, run: EnrichmentRun, token: string): Promise<EnrichmentRun> {
  return ctx.db.transaction().execute(async (trx) => {
    const current = await updateLeasedRun(trx, run.id, token);
    if (current.emailResults && current.resultEntryId !== null) {
      const account = await findAccount(trx, current.accountId);
      const entry = await trx
        .selectFrom("export_history")
        .select(["id", "account_id", "expires_at", "file_name", "file_type", "file_size", "storage_key"])
        .where("id", "=", current.resultEntryId)
        .executeTakeFirst();
      if (account && entry) {
        const link = await directFileLink(
          ctx,
          ctx.storage,
          {
            id: entry.id,
            accountId: entry.account_id,
            expiresAt: entry.expires_at,
            storageKey: entry.storage_key,
            fileName: entry.file_name,
            fileType: entry.file_type,
          },
          ctx.settings.mailLinkMs,
        );
        const attach = entry.file_size <= MAX_ATTACHMENT_BYTES;
        await enqueueMail(
          trx,
          {
            to: account.email,
            subject: `Your enrichment results are ready (run ${current.id})`,
            text: resultsMailText(current, link.url, link.expiresAt, attach),
            ...(attach
              ? {
                  attachments: [
                    { filename: entry.file_name, contentType: "text/csv", storageKey: entry.storage_key },
                  ],
                }
              : {}),
          },
          { jobKey: `enrichment-results:${current.id}` },
        );
      }
    }
    return updateLeasedRun(
      trx,
      run.id,
      token,
      {},
      { status: current.endedEarly ? "partial" : "completed", completed: true, releaseLease: true },
    );
  });
}

function resultsMailText(run: EnrichmentRun, url: string, expiresAt: Date, attached: boolean): string {
  const credits = fromTenths(run.dbChargedTenths + run.liveChargedTenths);
  return [
    `Your enrichment run ${run.id} has finished${run.endedEarly ? " early (live fetching reached its time limit)" : ""}.`,
    "",
    `URLs: ${run.urlCount} (${run.duplicatesRemoved} duplicates removed, ${run.skippedInvalid} not usable)`,
    `Found in the database: ${run.database.charged + run.database.free} (${run.database.charged} new)`,
    `Found live: ${run.live.delivered}`,
    `Credits charged: ${credits}`,
    "",
    attached
      ? "The result file is attached. You can also download it here:"
      : "Download the result file here:",
    url,
    `(This link works until ${expiresAt.toISOString()}; the file stays available from GET /enrichments/${run.id}/download.)`,
  ].join("\n");
}
