import type { DbOrTrx } from "../../db/database.js";
import { columnsOf, encodingOf, type ExportRow } from "../../export-files/columns.js";
import type { FieldMapping, FileFormat } from "../../export-files/format.js";
import {
  deleteExportFiles,
  exportFolder,
  writeExportFiles,
  type WrittenExport,
} from "../../export-files/store.js";
import { chunks, findExportRows, LEAD_CHUNK, streamExportBatches } from "../../exports/job/repository.js";
import type { FileStorage } from "../../storage/file-storage.js";
import type { ColumnsPosition } from "../schedule.js";
import { FULL_PREFIX, type FileSet } from "./distribution.js";

/** Default headers of the combined file's two columns (when the export format names none). */
export const DEFAULT_ASSIGNEE_HEADER = "Assigned To";
export const DEFAULT_FILE_NAME_HEADER = "File Part";

/** The combined file of a send: its two extra columns. */
export interface CombinedSpec {
  assigneeHeader: string;
  fileNameHeader: string;
  position: ColumnsPosition;
}

/** A file set, written. */
export interface WrittenSet {
  set: FileSet;
  written: WrittenExport;
}

/** Every file of a send. */
export interface SendFiles {
  exportId: string;
  sets: WrittenSet[];
  /** The combined file, when one was asked for and the send was divided. */
  combined: WrittenExport | null;
}

/**
 * A mapping the file writers take for an extra column: they use only a column's header and kind
 * (text), never its field, and the combined file's rows are built here, so any text field does.
 */
function extraColumn(header: string): FieldMapping {
  return { sourceField: "companyName", exportName: header, type: "field" };
}

/** The format of the combined file: one file, the format's columns and the two extra ones. */
function combinedFormat(format: FileFormat, spec: CombinedSpec): FileFormat {
  const extra = [extraColumn(spec.assigneeHeader), extraColumn(spec.fileNameHeader)];
  return {
    ...format,
    fieldMappings:
      spec.position === "beginning"
        ? [...extra, ...format.fieldMappings]
        : [...format.fieldMappings, ...extra],
    splitFiles: false,
    splitMode: null,
    maxRowsPerFile: null,
    numberOfParts: null,
    includeTotal: false,
  };
}

/** Whether the send was divided into several files (shares, or parts of a splitting format). */
function divided(sets: readonly WrittenSet[]): boolean {
  if (sets.filter((s) => s.set.share).length >= 2) return true;
  return sets.some((s) => s.written.files.filter((f) => !f.isTotal).length > 1);
}

/** The rows of the combined file: each lead once, with its assignee and the file it was in. */
async function* combinedRows(
  db: DbOrTrx,
  sets: readonly WrittenSet[],
  format: FileFormat,
  spec: CombinedSpec,
): AsyncGenerator<ExportRow[]> {
  const encoding = encodingOf(format.fileType);
  const cell = (text: string) => (encoding === "json" ? JSON.stringify(text) : text);
  const columns = columnsOf(format);
  const shares = sets.some((s) => s.set.share) ? sets.filter((s) => s.set.share) : sets;
  for (const { set, written } of shares) {
    let at = 0;
    for (const file of written.files.filter((f) => !f.isTotal)) {
      const ids = set.leadIds.slice(at, at + file.rows);
      at += file.rows;
      const extra = [cell(set.assignee), cell(file.fileName)];
      for (const part of chunks(ids, LEAD_CHUNK)) {
        const rows = await findExportRows(db, part, columns, encoding);
        yield rows.map((row) => (spec.position === "beginning" ? [...extra, ...row] : [...row, ...extra]));
      }
    }
  }
}

/**
 * Writes the files of a send to `exports/<account>/<exportId>/`: each file set as an export with
 * the format (split by it when it splits), then the combined file when asked for and the send was
 * divided. On failure everything written is removed.
 */
export async function writeSendFiles(
  db: DbOrTrx,
  storage: FileStorage,
  input: {
    accountId: number;
    exportId: string;
    format: FileFormat;
    sets: readonly FileSet[];
    combined: CombinedSpec | null;
    date: Date;
  },
): Promise<SendFiles> {
  const { accountId, exportId, format, date } = input;
  const sets: WrittenSet[] = [];
  try {
    for (const set of input.sets) {
      const written = await writeExportFiles(storage, {
        accountId,
        rows: streamExportBatches(db, set.leadIds, columnsOf(format), format.fileType),
        totalCount: set.leadIds.length,
        format,
        date,
        namePrefix: set.prefix,
        exportId,
      });
      // The ZIP of a split set is made for an answer; a send attaches the files themselves.
      if (written.answer.temporary) await deleteExportFiles(storage, [written.answer.storageKey]);
      sets.push({ set, written });
    }
    let combined: WrittenExport | null = null;
    if (input.combined && divided(sets)) {
      const total = sets.some((s) => s.set.share)
        ? sets.filter((s) => s.set.share).reduce((n, s) => n + s.set.leadIds.length, 0)
        : sets.reduce((n, s) => n + s.set.leadIds.length, 0);
      combined = await writeExportFiles(storage, {
        accountId,
        rows: combinedRows(db, sets, format, input.combined),
        totalCount: total,
        format: combinedFormat(format, input.combined),
        date,
        namePrefix: `${FULL_PREFIX}-combined`,
        exportId,
      });
    }
    return { exportId, sets, combined };
  } catch (err) {
    await storage.deletePrefix(exportFolder(accountId, exportId));
    throw err;
  }
}

/** Every file of a send, each once (a set's files, then the combined file). */
export function allFiles(files: SendFiles): WrittenExport[] {
  return [...files.sets.map((s) => s.written), ...(files.combined ? [files.combined] : [])];
}
