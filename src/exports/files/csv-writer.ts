import { PassThrough } from "node:stream";
import { csvCell } from "./cells.js";
import { valueOf, type ExportLead } from "./columns.js";
import { drained, type FileWriter, type WriterOptions } from "./writer.js";

/** A field that must be quoted: it holds a comma, a quote, CR or LF. */
const NEEDS_QUOTES = /[",\r\n]/;
const QUOTE = /"/g;
/** Text collected before it is handed to the stream (fewer, larger chunks). */
const FLUSH_CHARS = 64 * 1024;

/** One CSV field (RFC 4180): quoted, with quotes doubled, when it holds `,`, `"`, CR or LF. */
export function csvField(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replace(QUOTE, '""')}"` : text;
}

/**
 * A CSV writer (RFC 4180: comma, `"` quoting, CRLF, UTF-8 without BOM). Rows are collected as text
 * and handed to `output` in chunks of about 64 KB. Blank rows above `startRow` hold one empty
 * field per column.
 */
export function createCsvWriter({ columns, includeHeaders, startRow }: WriterOptions): FileWriter {
  const output = new PassThrough();
  let pending = "";
  let started = false;

  const flush = async (): Promise<void> => {
    if (pending === "") return;
    const chunk = Buffer.from(pending, "utf8");
    pending = "";
    if (!output.write(chunk)) await drained(output);
  };
  const put = (fields: string[]): void => {
    let line = "";
    for (let i = 0; i < fields.length; i += 1) line += (i === 0 ? "" : ",") + csvField(fields[i]!);
    pending += `${line}\r\n`;
  };
  const start = (): void => {
    if (started) return;
    started = true;
    const blank = columns.map(() => "");
    for (let row = 1; row < startRow; row += 1) put(blank);
    if (includeHeaders) put(columns.map((column) => column.header));
  };

  return {
    output,
    async write(lead: ExportLead) {
      start();
      put(columns.map((column) => csvCell(valueOf(lead, column))));
      if (pending.length >= FLUSH_CHARS) await flush();
    },
    async end() {
      start();
      await flush();
      output.end();
    },
  };
}
