import type { Readable, Writable } from "node:stream";
import type { Column, ExportRow } from "./columns.js";
import { CsvLines } from "./csv-lines.js";
import { createCsvWriter } from "./csv-writer.js";
import type { ExportFileType } from "./format.js";
import { createJsonWriter } from "./json-writer.js";
import { createXlsxWriter } from "./xlsx-writer.js";

/** Layout options every writer takes. */
export interface WriterOptions {
  columns: Column[];
  /** Whether the header row is written (CSV, XLSX). */
  includeHeaders: boolean;
  /** Row of the header (or of the first lead without headers); rows above stay empty (CSV, XLSX). */
  startRow: number;
}

/**
 * Some leads in file order: their rows in the encoding of the file type (`encodingOf`), or for a
 * CSV file their finished lines (CsvLines).
 */
export type RowBatch = readonly ExportRow[] | CsvLines;

/**
 * A streaming writer of one file: `write` the leads in order, a batch at a time (awaiting it keeps
 * memory flat: it waits while the consumer of `output` is behind), then `end`. Read `output` (for
 * example with `FileStorage.put`) while writing.
 */
export interface FileWriter {
  readonly output: Readable;
  write(batch: RowBatch): Promise<void>;
  end(): Promise<void>;
}

/** The rows of a batch, for writers that take rows only (JSON, XLSX). */
export function rowsIn(batch: RowBatch): readonly ExportRow[] {
  if (batch instanceof CsvLines) throw new Error("finished CSV lines can only be written to a CSV file");
  return batch;
}

/** A writer for the file type. */
export function createFileWriter(fileType: ExportFileType, options: WriterOptions): FileWriter {
  switch (fileType) {
    case "csv":
      return createCsvWriter(options);
    case "json":
      return createJsonWriter(options);
    case "xlsx":
      return createXlsxWriter(options);
  }
}

/** Resolves once `stream` can take more (at once when it can), or rejects if it fails first. */
export function drained(stream: Writable): Promise<void> {
  if (!stream.writableNeedDrain) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      stream.off("drain", onDrain);
      stream.off("error", done);
      stream.off("close", onClose);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => done();
    const onClose = () => done(new Error("the file stream closed before it was written"));
    stream.on("drain", onDrain);
    stream.on("error", done);
    stream.on("close", onClose);
  });
}
