import { sql } from "kysely";
import type { Trx } from "../../db/database.js";
import { integerSet } from "../../db/integer-array.js";
import { emitEvent, subscribedEventTypes } from "../../events/outbox.js";
import type { ExportHistoryEntry } from "../../export-history/entry.js";

/** A finished export, as its events describe it. */
export interface FinishedExport {
  accountId: number;
  exportId: string;
  entries: readonly ExportHistoryEntry[];
  fileType: "csv" | "json" | "xlsx";
  leadIds: readonly number[];
  creditsUsed: number;
  method: "dashboard" | "api" | "email_schedule";
}

/**
 * The events of a finished export, in the transaction that commits it: `export.completed` (the
 * files to fetch) and `export.leads` (the exported leads, sent in batches of 100 by the worker,
 * at the versions delivered: LEAD_VERSION_LOCK is held by recordDeliveredLeads until the commit).
 */
export async function emitExportEvents(trx: Trx, done: FinishedExport): Promise<void> {
  const subscribed = await subscribedEventTypes(trx, done.accountId);
  if (subscribed.has("export.completed")) {
    await emitEvent(trx, {
      accountId: done.accountId,
      type: "export.completed",
      data: {
        exportHistoryIds: done.entries.map((e) => e.id),
        fileNames: done.entries.map((e) => e.fileName),
        fileType: done.fileType,
        leadCount: done.leadIds.length,
        creditsUsed: done.creditsUsed,
        method: done.method,
      },
    });
  }
  if (subscribed.has("export.leads") && done.leadIds.length > 0) {
    const { rows } = await sql<{ id: number; version: number }>`
      select id, version from leads where id in ${integerSet(done.leadIds)}`.execute(trx);
    const versions = new Map(rows.map((r) => [r.id, r.version]));
    const leads = done.leadIds.flatMap((id) => {
      const version = versions.get(id);
      return version === undefined ? [] : [[id, version]];
    });
    await emitEvent(trx, {
      accountId: done.accountId,
      type: "export.leads",
      data: { exportId: done.exportId, source: done.method, leads },
    });
  }
}
