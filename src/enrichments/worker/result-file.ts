import { Readable } from "node:stream";
import { csvField, safeCellText, LIST_SEPARATOR } from "../../export-files/cells.js";
import { DEFAULT_COLUMNS } from "../../export-files/format.js";
import type { DbOrTrx } from "../../db/database.js";
import { toLead } from "../../leads/presenter.js";
import { findLeadsByIds } from "../../leads/repository.js";
import type { FileStorage } from "../../storage/file-storage.js";
import { findFileRows, type FileRow } from "../repository.js";
import { sourceOf } from "../run.js";

/** Rows read per query while the file is written. */
const READ_BATCH = 2_000;

/** The file's columns: the row's own four, then the default export columns of the lead. */
export const RESULT_HEADERS = ["Submitted URL", "Status", "Source", "Credits Charged", ...DEFAULT_COLUMNS];

/** Text of one cell (lists joined as in exports, dates ISO 8601). */
function cellText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return value.map(cellText).join(LIST_SEPARATOR);
  return JSON.stringify(value);
}

function line(cells: readonly unknown[]): string {
  return `${cells.map((cell) => csvField(safeCellText(cellText(cell)))).join(",")}\r\n`;
}

/** The lead columns of a live result: what the site gave. */
function liveLead(contacts: Record<string, unknown>): Record<string, unknown> {
  const list = (key: string) => (Array.isArray(contacts[key]) ? (contacts[key] as string[]) : []);
  return {
    companyName: contacts.companyName ?? null,
    website: contacts.website ?? null,
    email: list("emails")[0] ?? null,
    emailSecondary: list("emails")[1] ?? null,
    phone: list("phones")[0] ?? null,
    phoneSecondary: list("phones")[1] ?? null,
  };
}

async function* fileLines(db: DbOrTrx, runId: number): AsyncGenerator<Buffer> {
  yield Buffer.from(line(RESULT_HEADERS));
  let after = -1;
  for (;;) {
    const rows: FileRow[] = await findFileRows(db, runId, after, READ_BATCH);
    if (rows.length === 0) return;
    after = rows[rows.length - 1]?.position ?? after;
    const leadIds = rows.flatMap((row) =>
      sourceOf(row.status) === "database" && row.leadId !== null ? [row.leadId] : [],
    );
    const leads = new Map((await findLeadsByIds(db, leadIds)).map((lead) => [lead.id, toLead(lead)]));
    let chunk = "";
    for (const row of rows) {
      const source = sourceOf(row.status);
      let lead: Record<string, unknown> = {};
      if (source === "database" && row.leadId !== null) lead = leads.get(row.leadId) ?? {};
      else if (source === "live_scrape" && row.contacts) lead = liveLead(row.contacts);
      chunk += line([
        row.submittedUrl,
        row.status,
        source,
        row.creditsTenths / 10,
        ...DEFAULT_COLUMNS.map((field) => lead[field]),
      ]);
    }
    yield Buffer.from(chunk);
  }
}

/** Writes the run's result CSV to storage as a stream (one row per row of the run); returns its size. */
export async function writeResultFile(
  db: DbOrTrx,
  storage: FileStorage,
  runId: number,
  storageKey: string,
): Promise<{ size: number }> {
  return storage.put(storageKey, Readable.from(fileLines(db, runId)));
}
