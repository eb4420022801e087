import { stringify } from "csv-stringify";
import { csvCell } from "./cells.js";
import { valueOf, type ExportLead } from "./columns.js";
import { drained, type FileWriter, type WriterOptions } from "./writer.js";

/**
 * A CSV writer (RFC 4180: comma, `"` quoting, CRLF, UTF-8 without BOM) on csv-stringify. Blank rows
 * above `startRow` hold one empty field per column.
 */
export function createCsvWriter({ columns, includeHeaders, startRow }: WriterOptions): FileWriter {
  // csv-stringify quotes a field holding the record delimiter (CRLF) but not a lone LF or CR:
  // quote those too, or a multi-line description would break the row.
  const stringifier = stringify({ record_delimiter: "windows", quoted_match: /[\r\n]/ });
  let started = false;

  const put = async (record: string[]): Promise<void> => {
    if (!stringifier.write(record)) await drained(stringifier);
  };
  const start = async (): Promise<void> => {
    if (started) return;
    started = true;
    const blank = columns.map(() => "");
    for (let row = 1; row < startRow; row += 1) await put(blank);
    if (includeHeaders) await put(columns.map((column) => column.header));
  };

  return {
    output: stringifier,
    async write(lead: ExportLead) {
      await start();
      await put(columns.map((column) => csvCell(valueOf(lead, column))));
    },
    async end() {
      await start();
      stringifier.end();
    },
  };
}
