import ExcelJS from "exceljs";
import { PassThrough } from "node:stream";
import { xlsxCell } from "./cells.js";
import { valueOf, type ExportLead } from "./columns.js";
import { drained, type FileWriter, type WriterOptions } from "./writer.js";

/** Name of the one worksheet of an exported workbook. */
export const SHEET_NAME = "Leads";

/**
 * An XLSX writer on exceljs's streaming WorkbookWriter (no styles, no shared strings: rows are
 * written and forgotten, so memory does not grow with the file). Numbers and booleans stay typed.
 */
export function createXlsxWriter({ columns, includeHeaders, startRow }: WriterOptions): FileWriter {
  const output = new PassThrough();
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
    stream: output,
    useStyles: false,
    useSharedStrings: false,
  });
  const sheet = workbook.addWorksheet(SHEET_NAME);
  let nextRow = startRow;
  let started = false;

  const start = (): void => {
    if (started) return;
    started = true;
    if (includeHeaders) {
      const header = sheet.getRow(nextRow);
      header.values = columns.map((column) => column.header);
      header.commit();
      nextRow += 1;
    }
  };

  return {
    output,
    async write(lead: ExportLead) {
      start();
      const row = sheet.getRow(nextRow);
      row.values = columns.map((column) => xlsxCell(valueOf(lead, column)));
      row.commit();
      nextRow += 1;
      // The zip reads the sheet on later ticks: yield now and then, and wait for a slow reader.
      if (nextRow % 256 === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      await drained(output);
    },
    async end() {
      start();
      sheet.commit();
      await workbook.commit();
    },
  };
}
