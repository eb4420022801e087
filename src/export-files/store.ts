import { randomUUID } from "node:crypto";
import { ApiError } from "../http/errors.js";
import type { FileStorage } from "../storage/file-storage.js";
import { columnsOf } from "./columns.js";
import { CONTENT_TYPES, type ExportContentType, type FileFormat } from "./format.js";
import { assertExportFits, exportBaseName, exportFileName, planExport, type PlannedFile } from "./split.js";
import { createFileWriter } from "./create-file-writer.js";
import type { FileWriter, RowBatch } from "./writer.js";
import { zipStoredFiles } from "./zip.js";

/** A file of an export, written to storage. */
export interface StoredExportFile extends PlannedFile {
  fileType: FileFormat["fileType"];
  storageKey: string;
  /** Bytes. */
  size: number;
}

/** The file to answer an export request with: the single file, or a ZIP of every file. */
export interface ExportAnswerFile {
  contentType: ExportContentType;
  fileName: string;
  storageKey: string;
  /**
   * True for a ZIP made only for the answer: not an export history file; delete it with the job's
   * answer. False: the key is the export history file itself (never delete it).
   */
  temporary: boolean;
}

/** What an export writes. */
export interface WriteExportInput {
  accountId: number;
  /**
   * The leads in file order, in batches of any size: exactly `totalCount` rows in the encoding of
   * the format's file type (`encodingOf`), one value per column of `columnsOf(format)`, or for a
   * CSV file their finished lines.
   */
  rows: AsyncIterable<RowBatch> | Iterable<RowBatch>;
  totalCount: number;
  /** `toFileFormat(...)` of the saved format, or `defaultFileFormat()`. */
  format: FileFormat;
  /** Date in the file names (UTC); default now. */
  date?: Date;
  /** File name prefix; default `leads-main`. */
  namePrefix?: string;
  /** Groups the files in storage (`exports/<account>/<exportId>/`); default a random UUID. */
  exportId?: string;
}

/** The files written for one export. */
export interface StoredExport {
  /** Groups the files of the export (also part of their storage keys). */
  exportId: string;
  files: StoredExportFile[];
}

/** The files written for one export, and the answer file. */
export interface WrittenExport extends StoredExport {
  answer: ExportAnswerFile;
}

/**
 * Writes the export's files to storage as streams (parts, then `_total`; a ZIP of them when there
 * are several), reading `rows` once. Throws 400 `export_too_large` before writing anything when an
 * XLSX file would exceed 20,000 rows. On any failure the files written so far are removed.
 */
export async function writeExportFiles(
  storage: FileStorage,
  input: WriteExportInput,
): Promise<WrittenExport> {
  // One date for the files and the ZIP, even across midnight.
  const date = input.date ?? new Date();
  const stored = await writeStoredFiles(storage, { ...input, date });
  const { format } = input;
  if (stored.files.length === 1) {
    const [only] = stored.files as [StoredExportFile];
    return {
      ...stored,
      answer: {
        contentType: CONTENT_TYPES[format.fileType],
        fileName: only.fileName,
        storageKey: only.storageKey,
        temporary: false,
      },
    };
  }
  const zipName = exportFileName(exportBaseName(date, input.namePrefix), "zip");
  const zipKey = `${exportFolder(input.accountId, stored.exportId)}${zipName}`;
  try {
    await storage.put(
      zipKey,
      zipStoredFiles(
        storage,
        stored.files.map((f) => ({ name: f.fileName, storageKey: f.storageKey })),
      ),
    );
  } catch (err) {
    await deleteExportFiles(storage, [zipKey, ...stored.files.map((f) => f.storageKey)]);
    throw err;
  }
  return {
    ...stored,
    answer: { contentType: CONTENT_TYPES.zip, fileName: zipName, storageKey: zipKey, temporary: true },
  };
}

/**
 * Writes the export's files to storage as streams (parts, then `_total`), reading `rows` once,
 * without an answer file (no ZIP): for answers that name each file. Throws 400 `export_too_large`
 * before writing anything when an XLSX file would exceed 20,000 rows. On any failure the files
 * written so far are removed.
 */
export async function writeStoredFiles(storage: FileStorage, input: WriteExportInput): Promise<StoredExport> {
  const { format, totalCount } = input;
  assertExportFits(format, totalCount);
  const baseName = exportBaseName(input.date ?? new Date(), input.namePrefix);
  const plan = planExport(format, totalCount, baseName);
  const exportId = input.exportId ?? randomUUID();
  const keyOf = (fileName: string) => `${exportFolder(input.accountId, exportId)}${fileName}`;
  const options = {
    columns: columnsOf(format),
    includeHeaders: format.includeHeaders,
    startRow: format.startRow,
  };

  const written: StoredExportFile[] = [];
  const open = (file: PlannedFile): OpenFile => {
    const writer = createFileWriter(format.fileType, options);
    const storageKey = keyOf(file.fileName);
    // Errors reach the caller through the storage write; this keeps a late one from crashing.
    writer.output.on("error", () => undefined);
    const stored = storage.put(storageKey, writer.output);
    // Surfaces a storage failure at once instead of a stuck writer; awaited again in close().
    stored.catch(() => writer.output.destroy());
    return { file, writer, storageKey, stored };
  };
  const close = async (file: OpenFile): Promise<void> => {
    await file.writer.end();
    const { size } = await file.stored;
    written.push({ ...file.file, fileType: format.fileType, storageKey: file.storageKey, size });
  };

  const opened: OpenFile[] = [];
  const source = new RowSource(input.rows);
  try {
    const total = plan.total ? open(plan.total) : null;
    if (total) opened.push(total);
    for (const part of plan.parts) {
      const current = open(part);
      opened.push(current);
      for (let left = part.rows; left > 0;) {
        const rows = await source.take(left);
        if (!rows) throw new Error(`the export has ${source.taken} leads, ${totalCount} were announced`);
        left -= rows.length;
        await current.writer.write(rows);
        if (total) await total.writer.write(rows);
      }
      await close(current);
    }
    if (!(await source.exhausted()))
      throw new Error(`the export has more than the ${totalCount} leads announced`);
    if (total) await close(total);
    return { exportId, files: written };
  } catch (err) {
    await source.close();
    for (const file of opened) file.writer.output.destroy();
    const stores = await Promise.allSettled(opened.map((file) => file.stored));
    await deleteExportFiles(
      storage,
      opened.map((file) => file.storageKey),
    );
    // A store that refused the file (503, a full disk or an unreachable bucket) destroys the
    // writer, whose own error may surface first: the store's answer is the one to give.
    const refused = stores.find(
      (s): s is PromiseRejectedResult => s.status === "rejected" && s.reason instanceof ApiError,
    );
    throw err instanceof ApiError || !refused ? err : refused.reason;
  }
}

/**
 * Storage key of the ZIP answer of the export a stored file belongs to (it sits beside the files:
 * `exports/<account>/<export>/<base>.zip`); the cleanup removes it with the expired files.
 */
export function zipAnswerKeyOf(file: { storageKey: string; fileName: string }): string {
  const dir = file.storageKey.slice(0, file.storageKey.lastIndexOf("/"));
  const base = file.fileName.replace(/(_part\d+|_total)?\.[a-z]+$/, "");
  return `${dir}/${exportFileName(base, "zip")}`;
}

/** The storage folder of an export's files. */
export function exportFolder(accountId: number, exportId: string): string {
  return `exports/${accountId}/${exportId}/`;
}

/** Removes stored files (for example when the transaction that records an export fails). */
export async function deleteExportFiles(storage: FileStorage, keys: string[]): Promise<void> {
  await Promise.allSettled(keys.map((key) => storage.delete(key)));
}

/** A file being written: its writer and the storage write reading it. */
interface OpenFile {
  file: PlannedFile;
  writer: FileWriter;
  storageKey: string;
  stored: Promise<{ size: number }>;
}

/** Hands out the leads of batches in pieces of at most a given size. */
class RowSource {
  private readonly iterator: AsyncIterator<RowBatch> | Iterator<RowBatch>;
  private batch: RowBatch = [];
  private at = 0;
  /** Rows handed out so far. */
  taken = 0;

  constructor(rows: AsyncIterable<RowBatch> | Iterable<RowBatch>) {
    this.iterator = Symbol.asyncIterator in rows ? rows[Symbol.asyncIterator]() : rows[Symbol.iterator]();
  }

  /** The next 1 to `most` rows, or null when there are no more. */
  async take(most: number): Promise<RowBatch | null> {
    if (!(await this.fill())) return null;
    const end = Math.min(this.batch.length, this.at + most);
    const rows = this.at === 0 && end === this.batch.length ? this.batch : this.batch.slice(this.at, end);
    this.at = end;
    this.taken += rows.length;
    return rows;
  }

  /** Whether every row was handed out (reads ahead by one batch to know). */
  async exhausted(): Promise<boolean> {
    return !(await this.fill());
  }

  /** Stops the source early (a generator's finally blocks run). */
  async close(): Promise<void> {
    await Promise.resolve(this.iterator.return?.()).catch(() => undefined);
  }

  /** Makes sure a row is waiting; false when the batches are over. */
  private async fill(): Promise<boolean> {
    while (this.at >= this.batch.length) {
      const next = await this.iterator.next();
      if (next.done) return false;
      this.batch = next.value;
      this.at = 0;
    }
    return true;
  }
}
