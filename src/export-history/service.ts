import type { Db, DbOrTrx } from "../db/database.js";
import { CONTENT_TYPES } from "../export-files/format.js";
import { zipAnswerKeyOf, type StoredExport } from "../export-files/store.js";
import type { ServedFile } from "../http/contract.js";
import { errors } from "../http/errors.js";
import type { FileStorage } from "../storage/file-storage.js";
import { presignedLink } from "../storage/presigned-link.js";
import {
  FILE_LIFETIME_DAYS,
  unavailability,
  type ExportHistoryEntry,
  type ExportMethod,
  type Unavailability,
} from "./entry.js";
import { findEntry, findExpiredStored, insertEntries, listEntries, markFilesDeleted } from "./repository.js";
import { fileUnavailable } from "./errors.js";
import { LINK_LIFETIME_MS, signFileToken, verifyFileToken } from "./signed-links.js";

const DAY_MS = 24 * 60 * 60 * 1000;

/** An entry with whether its file can be downloaded now. */
export interface ListedEntry {
  entry: ExportHistoryEntry;
  unavailableReason: Unavailability;
}

/** One page of the account's files, newest first; each checked against storage. */
export async function listExportHistory(
  db: DbOrTrx,
  storage: FileStorage,
  accountId: number,
  page: { limit: number; offset: number },
  now = new Date(),
): Promise<{ entries: ListedEntry[]; totalCount: number }> {
  const { entries, totalCount } = await listEntries(db, accountId, page);
  const listed = await Promise.all(
    entries.map(async (entry) => {
      const expiredOrDeleted = unavailability(entry, now, 0);
      const size = expiredOrDeleted ? 0 : await storage.size(entry.storageKey);
      return { entry, unavailableReason: unavailability(entry, now, size) };
    }),
  );
  return { entries: listed, totalCount };
}

/** The entry's file opened to be served: 410 `file_unavailable` once expired or no longer stored. */
async function openEntryFile(
  storage: FileStorage,
  entry: ExportHistoryEntry,
  now: Date,
): Promise<ServedFile<(typeof CONTENT_TYPES)[ExportHistoryEntry["fileType"]]>> {
  if (unavailability(entry, now, 0) === "expired") throw fileUnavailable("expired");
  const stored = await storage.open(entry.storageKey);
  if (!stored) throw fileUnavailable("not_stored");
  return { fileName: entry.fileName, contentType: CONTENT_TYPES[entry.fileType], ...stored };
}

/** The account's file `id`: 404 for another account's, 410 `file_unavailable` once expired or gone. */
export async function openExportFile(
  db: DbOrTrx,
  storage: FileStorage,
  accountId: number,
  id: number,
  now = new Date(),
): Promise<ServedFile<(typeof CONTENT_TYPES)[ExportHistoryEntry["fileType"]]>> {
  const entry = await findEntry(db, accountId, id);
  if (!entry) throw errors.notFound("Export history entry not found.");
  return openEntryFile(storage, entry, now);
}

/** Where signed links point and what signs them. */
export interface LinkSigner {
  signingSecret: string;
  /** `PUBLIC_BASE_URL` without a trailing slash. */
  publicBaseUrl: string;
}

/**
 * A signed direct link to a stored file of the export history, valid `lifetimeMs` (or until the
 * file expires, if sooner). The token's expiry has whole seconds: the answer is the time the link
 * really stops working.
 */
export function signedFileLink(
  signer: LinkSigner,
  entry: { id: number; accountId: number; expiresAt: Date },
  lifetimeMs: number,
  now = new Date(),
): { url: string; expiresAt: Date } {
  const expiresAt = new Date(Math.min(now.getTime() + lifetimeMs, entry.expiresAt.getTime()));
  const token = signFileToken(signer.signingSecret, {
    entryId: entry.id,
    accountId: entry.accountId,
    expiresAt,
  });
  return {
    url: `${signer.publicBaseUrl}/api/v1/files/${token}`,
    expiresAt: new Date(Math.floor(expiresAt.getTime() / 1000) * 1000),
  };
}

/**
 * A signed direct link to the entry's file, valid 15 minutes (or until the file expires, if sooner).
 * For an entry already checked as available (the export job's `inline: false` answer uses it too).
 */
export function downloadLinkFor(
  signer: LinkSigner,
  entry: ExportHistoryEntry,
  now = new Date(),
): { url: string; expiresAt: Date } {
  return signedFileLink(signer, entry, LINK_LIFETIME_MS, now);
}

/**
 * A direct link to a stored file of the export history, valid `lifetimeMs` (or until the file
 * expires, if sooner): a presigned URL of the bucket when files are in object storage, else the
 * API's signed link (signedFileLink). Either works without an API key, from any host.
 */
export async function directFileLink(
  signer: LinkSigner,
  storage: FileStorage,
  entry: Pick<ExportHistoryEntry, "id" | "accountId" | "expiresAt" | "storageKey" | "fileName" | "fileType">,
  lifetimeMs: number,
  now = new Date(),
): Promise<{ url: string; expiresAt: Date }> {
  const until = new Date(Math.min(now.getTime() + lifetimeMs, entry.expiresAt.getTime()));
  const file = {
    storageKey: entry.storageKey,
    fileName: entry.fileName,
    contentType: CONTENT_TYPES[entry.fileType],
  };
  return (await presignedLink(storage, file, until, now)) ?? signedFileLink(signer, entry, lifetimeMs, now);
}

/**
 * A direct link (directFileLink, 15 minutes) to the account's file `id`, with the entry: 404 for
 * another account's, 410 when unavailable.
 */
export async function createDownloadLink(
  db: DbOrTrx,
  storage: FileStorage,
  signer: LinkSigner,
  accountId: number,
  id: number,
  now = new Date(),
): Promise<{ entry: ExportHistoryEntry; url: string; expiresAt: Date }> {
  const entry = await findEntry(db, accountId, id);
  if (!entry) throw errors.notFound("Export history entry not found.");
  const reason = unavailability(entry, now, await storage.size(entry.storageKey));
  if (reason) throw fileUnavailable(reason);
  return { entry, ...(await directFileLink(signer, storage, entry, LINK_LIFETIME_MS, now)) };
}

/**
 * The file of a signed link: 404 for a malformed or forged token (or an entry that no longer
 * exists), 410 once the link or the file expired or the file is gone.
 */
export async function openSignedFile(
  db: DbOrTrx,
  storage: FileStorage,
  signingSecret: string,
  token: string,
  now = new Date(),
): Promise<ServedFile<(typeof CONTENT_TYPES)[ExportHistoryEntry["fileType"]]>> {
  const claim = verifyFileToken(signingSecret, token);
  if (!claim) throw errors.notFound("This download link is not valid.");
  const entry = await findEntry(db, claim.accountId, claim.entryId);
  if (!entry) throw errors.notFound("This download link is not valid.");
  if (claim.expiresAt.getTime() <= now.getTime()) throw fileUnavailable("link_expired");
  return openEntryFile(storage, entry, now);
}

/** What to record of a written export. */
export interface RecordExportInput {
  accountId: number;
  written: StoredExport;
  /** The saved format's name, or null for the built-in default columns. */
  formatName: string | null;
  /**
   * The export's search parameters in their canonical body form (searchFiltersToJson); null or
   * absent when the files were not written from a search.
   */
  filters?: Record<string, unknown> | null;
  method: ExportMethod;
  /** Export time (default now); files expire 90 days later. */
  createdAt?: Date;
}

/**
 * Records the files of a written export as export history entries (one per file, parts then
 * `_total`). Call it in the transaction that charges the export, so a file is never recorded
 * without its charge or the reverse.
 */
export async function recordExportFiles(
  db: DbOrTrx,
  input: RecordExportInput,
): Promise<ExportHistoryEntry[]> {
  const createdAt = input.createdAt ?? new Date();
  const expiresAt = new Date(createdAt.getTime() + FILE_LIFETIME_DAYS * DAY_MS);
  return insertEntries(
    db,
    input.accountId,
    input.written.files.map((file) => ({
      exportId: input.written.exportId,
      fileName: file.fileName,
      fileType: file.fileType,
      leadCount: file.rows,
      fileSize: file.size,
      formatName: input.formatName,
      exportMethod: input.method,
      partNumber: file.partNumber,
      isTotal: file.isTotal,
      storageKey: file.storageKey,
      filters: input.filters ?? null,
      createdAt,
      expiresAt,
    })),
  );
}

/**
 * Removes the bytes of files past their expiry (the entries stay listed as expired); returns how
 * many were removed. Run by the worker's cleanup task.
 */
export async function deleteExpiredExportFiles(
  db: Db,
  storage: FileStorage,
  now = new Date(),
  batch = 500,
): Promise<number> {
  let removed = 0;
  for (;;) {
    const expired = await findExpiredStored(db, now, batch);
    if (expired.length === 0) return removed;
    // The files, and the ZIP answer of their export when there was one.
    const keys = new Set(expired.flatMap((entry) => [entry.storageKey, zipAnswerKeyOf(entry)]));
    // Every delete must succeed (a missing file counts as deleted): with the store down the task
    // fails and runs again, and no entry is marked deleted while its object is still stored.
    await Promise.all([...keys].map((key) => storage.delete(key)));
    await markFilesDeleted(
      db,
      expired.map((entry) => entry.id),
      now,
    );
    removed += expired.length;
    if (expired.length < batch) return removed;
  }
}
