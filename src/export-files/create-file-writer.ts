import { createCsvWriter } from "./csv-writer.js";
import type { ExportFileType } from "./format.js";
import { createJsonWriter } from "./json-writer.js";
import type { FileWriter, WriterOptions } from "./writer.js";
import { createXlsxWriter } from "./xlsx-writer.js";

/**
 * A writer for the file type. The factory lives apart from the shared contract (writer.ts), which
 * the writers import, so the writers and the contract do not import each other.
 */
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
