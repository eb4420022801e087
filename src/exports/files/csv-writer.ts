import { PassThrough } from "node:stream";
import { csvField, safeCellText } from "./cells.js";
import { CsvLines } from "./csv-lines.js";
import { drained, type FileWriter, type RowBatch, type WriterOptions } from "./writer.js";

/** Text collected before it is handed to the stream (fewer, larger chunks). */
const FLUSH_CHARS = 64 * 1024;

/** A CSV line (with its CRLF) of cell texts. */
function csvLine(fields: readonly string[]): string {
  let line = "";
  for (let i = 0; i < fields.length; i += 1) line += (i === 0 ? "" : ",") + csvField(fields[i]!);
  return `${line}\r\n`;
}

/**
 * A CSV writer (RFC 4180: comma, `"` quoting, CRLF, UTF-8 without BOM) of `text`-encoded rows or
 * finished CsvLines (written as they are).
 * Text cells (headers included) are made safe (`safeCellText`); numbers and booleans are written
 * as they are. Rows are collected as text and handed to `output` in chunks of about 64 KB. Blank
 * rows above `startRow` hold one empty field per column.
 */
export function createCsvWriter({ columns, includeHeaders, startRow }: WriterOptions): FileWriter {
  const output = new PassThrough();
  const typed = columns.map((column) => column.kind !== "text");
  let pending = "";
  let started = false;

  const flush = async (): Promise<void> => {
    if (pending === "") return;
    const chunk = Buffer.from(pending, "utf8");
    pending = "";
    if (!output.write(chunk)) await drained(output);
  };
  const start = (): void => {
    if (started) return;
    started = true;
    const blank = columns.map(() => "");
    for (let row = 1; row < startRow; row += 1) pending += csvLine(blank);
    if (includeHeaders) pending += csvLine(columns.map((column) => safeCellText(column.header)));
  };

  return {
    output,
    async write(batch: RowBatch) {
      start();
      if (batch instanceof CsvLines) {
        await flush();
        if (batch.bytes.length > 0 && !output.write(batch.bytes)) await drained(output);
        return;
      }
      for (const row of batch) {
        let line = "";
        for (let i = 0; i < typed.length; i += 1) {
          const value = row[i];
          const text = value === null || value === undefined ? "" : typed[i] ? value : safeCellText(value);
          line += (i === 0 ? "" : ",") + csvField(text);
        }
        pending += `${line}\r\n`;
        if (pending.length >= FLUSH_CHARS) await flush();
      }
    },
    async end() {
      start();
      await flush();
      output.end();
    },
  };
}
