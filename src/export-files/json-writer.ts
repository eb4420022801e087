import { PassThrough } from "node:stream";
import { ChunkedText, rowsIn, type FileWriter, type RowBatch, type WriterOptions } from "./writer.js";

/**
 * A JSON writer of `json`-encoded rows: an array of objects keyed by the export names, one lead
 * per line. Values keep their JSON types (lists stay arrays; a missing value is `null`); a spacer
 * is `""`; when two columns share a name the first one keeps it. Headers and `startRow` do not
 * apply.
 */
export function createJsonWriter({ columns }: WriterOptions): FileWriter {
  const output = new PassThrough();
  // Each written column: its `"name":` prefix and whether it is a spacer.
  const seen = new Set<string>();
  const keys: { index: number; prefix: string; spacer: boolean }[] = [];
  columns.forEach((column, index) => {
    if (seen.has(column.header)) return;
    seen.add(column.header);
    keys.push({ index, prefix: `${JSON.stringify(column.header)}:`, spacer: column.field === null });
  });
  const out = new ChunkedText(output);
  let count = 0;

  return {
    output,
    async write(batch: RowBatch) {
      const rows = rowsIn(batch);
      for (const row of rows) {
        let object = "{";
        for (let k = 0; k < keys.length; k += 1) {
          const { index, prefix, spacer } = keys[k]!;
          object += (k === 0 ? "" : ",") + prefix + (spacer ? '""' : (row[index] ?? "null"));
        }
        const full = out.add((count === 0 ? "[\n" : ",\n") + object + "}");
        count += 1;
        if (full) await out.flush();
      }
    },
    async end() {
      out.add(count === 0 ? "[]\n" : "\n]\n");
      await out.flush();
      output.end();
    },
  };
}
