import { getAccountWithBalance } from "../../accounts/service.js";
import { spendable } from "../../credits/spendable.js";
import type { Db } from "../../db/database.js";
import { blacklistedDomains } from "../../export-blacklist/match.js";
import { tuneSearch } from "../../leads/search/settings.js";
import { withLeadQuerySlot } from "../../leads/search/capacity.js";
import type { FileFormat } from "../../export-files/format.js";
import { assertExportFits, formatLeadCapacity } from "../../export-files/split.js";
import type { ExportLeads } from "./input.js";
import { streamCandidates } from "./repository.js";
import { exportLimit, newLeadsFirst, selectLeads, type ExportCaps, type Selection } from "./selection.js";

/** What an export selects from. */
export interface ExportSelectionRequest {
  accountId: number;
  leads: ExportLeads;
  caps: ExportCaps;
  format: FileFormat;
}

/** How many new leads the account's spendable balance pays for (src/credits/spendable.ts). */
async function balanceCap(db: Db, accountId: number): Promise<number> {
  return spendable((await getAccountWithBalance(db, accountId)).balance).leads;
}

/**
 * Selects the leads of an export (nothing charged or written): the matches in export order,
 * blacklisted domains left out, capped by the cost controls, the format's capacity, 100,000 and
 * the spendable balance. Runs in one read-only transaction, so the order is one snapshot.
 */
export async function selectExport(
  db: Db,
  request: ExportSelectionRequest,
  signal?: AbortSignal,
): Promise<Selection> {
  const [cap, blacklist] = await Promise.all([
    balanceCap(db, request.accountId),
    blacklistedDomains(db, request.accountId),
  ]);
  return db
    .transaction()
    .setAccessMode("read only")
    .execute(async (trx) => {
      // The search's settings (64 MB of sort memory: 200,000 candidates sort in memory), as a
      // search with many terms: bounded well below the job's time limit.
      await tuneSearch(trx);
      const { filters, selectedIds, excludePurchased } = request.leads;
      const candidates = streamCandidates(trx, {
        accountId: request.accountId,
        filters,
        selectedIds,
        newFirst: newLeadsFirst(request.caps),
        onlyReceived: request.caps.maxCredits === 0,
        onlyNew: excludePurchased,
        withUrls: blacklist.size > 0,
      });
      return selectLeads(abortable(candidates, signal), {
        caps: request.caps,
        formatCapacity: formatLeadCapacity(request.format),
        balanceCap: cap,
        blacklist,
      });
    });
}

/**
 * The checks that can refuse an export before a job exists: 400 `export_too_large` when an XLSX
 * file would hold more than 20,000 rows. The bound of the caps is tried first; only when it does
 * not fit are the leads selected and counted, in one of the account's lead query slots (429
 * `lead_query_capacity_busy` when all are taken).
 */
export async function checkExportFits(db: Db, request: ExportSelectionRequest): Promise<void> {
  if (request.format.fileType !== "xlsx") return;
  try {
    assertExportFits(request.format, exportLimit(request.caps, formatLeadCapacity(request.format)));
    return;
  } catch {
    // The bound does not fit: count what the export would really hold.
  }
  // Counting runs the search: one of the account's lead queries (429 when 10 already run).
  const selection = await withLeadQuerySlot(db, request.accountId, () => selectExport(db, request));
  assertExportFits(request.format, selection.ids.length);
}

async function* abortable<T>(source: AsyncGenerator<T>, signal?: AbortSignal): AsyncGenerator<T> {
  try {
    for await (const batch of source) {
      signal?.throwIfAborted();
      yield batch;
    }
  } finally {
    await source.return(undefined);
  }
}
