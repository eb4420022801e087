import type { Readable, Writable } from "node:stream";
import type { Column, ExportRow } from "./columns.js";
import { CsvLines } from "./csv-lines.js";

// What every file writer shares: the contract, the batch type and the stream helpers. The writers
// import this module and the factory (create-file-writer.ts) imports the writers, so nothing
// imports back.

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

/** Text collected before it is handed to a stream (fewer, larger chunks). */
const CHUNK_CHARS = 64 * 1024;

/**
 * Text a writer collects and hands to its stream in chunks of about 64 KB, waiting while the
 * stream's reader is behind: `if (out.add(text)) await out.flush();`.
 */
export class ChunkedText {
  private pending = "";

  constructor(private readonly stream: Writable) {}

  /** Adds text; true when a chunk is full and should be flushed. */
  add(text: string): boolean {
    this.pending += text;
    return this.pending.length >= CHUNK_CHARS;
  }

  /** Hands the collected text to the stream; resolves once it can take more. */
  async flush(): Promise<void> {
    if (this.pending === "") return;
    const chunk = Buffer.from(this.pending, "utf8");
    this.pending = "";
    await this.writeBytes(chunk);
  }

  /** Flushes, then hands bytes made elsewhere to the stream, in order. */
  async writeBytes(bytes: Buffer): Promise<void> {
    if (this.pending !== "") await this.flush();
    if (bytes.length > 0 && !this.stream.write(bytes)) await drained(this.stream);
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
