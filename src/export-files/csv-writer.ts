import { PassThrough } from "node:stream";
import { csvField, safeCellText } from "./cells.js";
import { CsvLines } from "./csv-lines.js";
import { ChunkedText, type FileWriter, type RowBatch, type WriterOptions } from "./writer.js";

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
  const out = new ChunkedText(output);
  let started = false;

  const start = (): void => {
    if (started) return;
    started = true;
    const blank = columns.map(() => "");
    for (let row = 1; row < startRow; row += 1) out.add(csvLine(blank));
    if (includeHeaders) out.add(csvLine(columns.map((column) => safeCellText(column.header))));
  };

  return {
    output,
    async write(batch: RowBatch) {
      start();
      if (batch instanceof CsvLines) {
        await out.writeBytes(batch.bytes);
        return;
      }
      for (const row of batch) {
        let line = "";
        for (let i = 0; i < typed.length; i += 1) {
          const value = row[i];
          const text = value === null || value === undefined ? "" : typed[i] ? value : safeCellText(value);
          line += (i === 0 ? "" : ",") + csvField(text);
        }
        if (out.add(`${line}\r\n`)) await out.flush();
      }
    },
    async end() {
      start();
      await out.flush();
      output.end();
    },
  };
}
