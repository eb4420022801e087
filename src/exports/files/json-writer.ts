import { PassThrough } from "node:stream";
import { jsonValue } from "./cells.js";
import { valueOf, type ExportLead } from "./columns.js";
import { drained, type FileWriter, type WriterOptions } from "./writer.js";

/**
 * A JSON writer: an array of objects keyed by the export names, written one lead at a time. Values
 * keep their JSON types (lists stay arrays); a spacer is `""`; when two columns share a name the
 * first one keeps it. Headers and `startRow` do not apply.
 */
export function createJsonWriter({ columns }: WriterOptions): FileWriter {
  const output = new PassThrough();
  let count = 0;

  const put = async (text: string): Promise<void> => {
    if (!output.write(text)) await drained(output);
  };

  return {
    output,
    async write(lead: ExportLead) {
      const row: Record<string, unknown> = {};
      for (const column of columns) {
        if (Object.hasOwn(row, column.header)) continue;
        row[column.header] = column.field === null ? "" : jsonValue(valueOf(lead, column));
      }
      await put((count === 0 ? "[\n" : ",\n") + JSON.stringify(row));
      count += 1;
    },
    async end() {
      output.end(count === 0 ? "[]\n" : "\n]\n");
    },
  };
}
