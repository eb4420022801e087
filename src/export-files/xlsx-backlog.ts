import type { Worksheet } from "exceljs";
import type { EventEmitter } from "node:events";
import { setImmediate as nextTurn } from "node:timers/promises";

/**
 * Sheet XML waiting for the compressor above which the writer lets the event loop turn: archiver
 * deflates on libuv's thread pool, but each 64 KB piece needs a callback on this thread to start,
 * so without turns the compressor waits until the whole batch is written.
 */
const TURN_BYTES = 128 * 1024;

/**
 * Sheet XML waiting for the compressor above which the writer waits for it to catch up: exceljs
 * hands the sheet's XML to its ZIP without back-pressure, so this bounds the writer's memory.
 */
const MAX_BYTES = 1024 * 1024;

/** The slice of a readable-stream 2 stream's state read here. */
interface StreamState {
  length: number;
  needDrain?: boolean;
}

/** The archive entry stream that carries a sheet's XML into archiver. */
interface EntryStream extends EventEmitter {
  _writableState: StreamState;
  _readableState: StreamState;
}

/**
 * What exceljs's streaming worksheet has written that its ZIP has not compressed yet, and the
 * pacing of a writer by it.
 *
 * exceljs 4.4.0 (pinned in package.json) writes a sheet into a StreamBuf (`worksheet.stream`)
 * that pushes 64 KB buffers into archiver's entry stream (the StreamBuf's one pipe, a
 * readable-stream PassThrough) ignoring back-pressure, so the entry's buffers grow without bound
 * whenever the compressor or the reader of the workbook is behind. Those buffers are what this
 * reads; no public exceljs API exposes them. `entryFound` is false if exceljs ever lays them out
 * differently (test/export-files.test.ts checks it is true).
 */
export class SheetBacklog {
  private readonly entry: EntryStream | undefined;

  constructor(sheet: Worksheet) {
    const buffer = (sheet as unknown as { stream?: { pipes?: unknown[] } }).stream;
    const entry = buffer?.pipes?.[0] as Partial<EntryStream> | undefined;
    this.entry =
      typeof entry?._writableState?.length === "number" && typeof entry._readableState?.length === "number"
        ? (entry as EntryStream)
        : undefined;
  }

  /** Whether the sheet's entry stream was found (without it, only the workbook's output paces). */
  get entryFound(): boolean {
    return this.entry !== undefined;
  }

  /** Bytes of sheet XML waiting for the compressor. */
  get bytes(): number {
    return this.entry ? this.entry._writableState.length + this.entry._readableState.length : 0;
  }

  /** True when the writer should call `pace` before adding rows. */
  get due(): boolean {
    return this.bytes >= TURN_BYTES;
  }

  /**
   * Lets the compressor work: one turn of the event loop, or, with more than MAX_BYTES waiting
   * (the compressor or the reader of the workbook is behind), until the entry's buffers are
   * taken ("drain").
   */
  async pace(): Promise<void> {
    const entry = this.entry;
    if (entry && this.bytes > MAX_BYTES && entry._writableState.needDrain) {
      await new Promise<void>((resolve) => entry.once("drain", () => resolve()));
    } else {
      await nextTurn();
    }
  }
}
