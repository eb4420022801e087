import type { Db, DbOrTrx } from "../db/database.js";
import { errors, type ErrorDetail } from "../http/errors.js";
import { normalizeDomain } from "./domain.js";
import {
  deleteEntry,
  insertNewEntries,
  listEntries,
  type BlacklistEntry,
  type BlacklistEntryType,
} from "./repository.js";

/** An entry as sent (schema-checked). */
export interface BlacklistEntryInput {
  entryType: BlacklistEntryType;
  value: string;
}

/** What adding entries did: the entries created, in the order sent, and how many were skipped. */
export interface AddResult {
  added: BlacklistEntry[];
  skipped: number;
}

/**
 * `POST /export-blacklist` as sent (schema-checked): several entries as `entries`, or one as
 * `value` with `entryType`.
 */
export interface BlacklistAddInput {
  entries?: BlacklistEntryInput[];
  entryType?: BlacklistEntryType;
  value?: string;
}

/** An entry as sent, with the path of its `value` for `details`. */
interface SentEntry {
  entry: BlacklistEntryInput;
  valuePath: string[];
}

/**
 * The entries of a request in either form, in the order sent. 400 `validation_error` when both
 * forms are sent, neither, or a `value` without its `entryType` (or the reverse).
 */
function entriesOf(input: BlacklistAddInput): SentEntry[] {
  const single = input.value !== undefined || input.entryType !== undefined;
  if (input.entries !== undefined && single) {
    throw errors.validation("Send either entries, or one value with its entryType, not both.", [
      { path: ["body"], message: "must have either entries or value with entryType, not both" },
    ]);
  }
  if (input.entries !== undefined) {
    return input.entries.map((entry, index) => ({
      entry,
      valuePath: ["body", "entries", String(index), "value"],
    }));
  }
  if (input.value === undefined || input.entryType === undefined) {
    const missing = !single ? "entries" : input.value === undefined ? "value" : "entryType";
    const message = !single ? "send entries, or one value with its entryType" : "is required";
    throw errors.validation(`Invalid request: body.${missing}: ${message}.`, [
      { path: ["body", missing], message },
    ]);
  }
  return [{ entry: { entryType: input.entryType, value: input.value }, valuePath: ["body", "value"] }];
}

/**
 * The normalised domains of the entries, in the order sent. Throws 400 `validation_error` with one
 * detail per value that is not a domain, so nothing is stored when any entry is bad.
 */
export function normalizeEntries(entries: readonly SentEntry[]): string[] {
  const problems: ErrorDetail[] = [];
  const values = entries.map(({ entry, valuePath }) => {
    const domain = normalizeDomain(entry.value);
    if (domain === undefined) {
      problems.push({ path: valuePath, message: "is not a domain or a URL with a domain" });
    }
    return domain ?? "";
  });
  if (problems.length > 0) {
    throw errors.validation(
      `Invalid blacklist entries: ${problems.map((p) => p.path.join(".")).join(", ")} ${problems.length === 1 ? "is" : "are"} not a domain.`,
      problems,
    );
  }
  return values;
}

/** The account's entries, newest first. */
export function listBlacklist(db: DbOrTrx, accountId: number): Promise<BlacklistEntry[]> {
  return listEntries(db, accountId);
}

/**
 * Adds domains, sent as `entries` or as one `value` with `entryType`: every value is checked first
 * (one bad value: 400 and nothing added); a domain repeated in the request or already listed is
 * skipped. One transaction, so a failure part way adds nothing.
 */
export async function addToBlacklist(
  db: Db,
  accountId: number,
  input: BlacklistAddInput,
): Promise<AddResult> {
  const entries = entriesOf(input);
  const values = normalizeEntries(entries);
  const unique = [...new Set(values)];
  const created = await db.transaction().execute((trx) => insertNewEntries(trx, accountId, "domain", unique));
  const order = new Map(unique.map((value, index) => [value, index]));
  created.sort((a, b) => (order.get(a.value) ?? 0) - (order.get(b.value) ?? 0));
  return { added: created, skipped: entries.length - created.length };
}

/** Removes one of the account's entries; 404 when it has no such entry. */
export async function removeFromBlacklist(db: DbOrTrx, accountId: number, id: number): Promise<void> {
  if (!(await deleteEntry(db, accountId, id))) throw errors.notFound("Blacklist entry not found.");
}
