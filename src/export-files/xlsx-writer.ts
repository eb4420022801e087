import ExcelJS, { type Row, type Style } from "exceljs";
import { PassThrough } from "node:stream";
import type { ExportRow } from "./columns.js";
import { SheetBacklog } from "./xlsx-backlog.js";
import { columnWidths, xlsxText, xlsxValue, type XlsxValue } from "./xlsx-cells.js";
import { drained, rowsIn, type FileWriter, type RowBatch, type WriterOptions } from "./writer.js";

/** Name of the one worksheet of an exported workbook. */
export const SHEET_NAME = "Leads";

/**
 * The header's cell style (the workbook's one style besides the default): the default font
 * (exceljs's, Calibri 11), bold. A font holding only "bold" would leave size and face to the reader.
 */
const HEADER_STYLE: Partial<Style> = Object.freeze({
  font: Object.freeze({
    name: "Calibri",
    family: 2,
    scheme: "minor",
    size: 11,
    color: { theme: 1 },
    bold: true,
  }),
});

/**
 * The style object every data cell and every row shares. exceljs builds a fresh, empty style
 * object per cell and per row and, with styles on, works out each one's style id from scratch
 * (about doubling the cost of a row); a shared object is looked up once (exceljs remembers style
 * ids per object) and gets the default style.
 */
const DATA_STYLE: Partial<Style> = Object.freeze({});

/**
 * An XLSX writer of `text`-encoded rows through exceljs's streaming WorkbookWriter: one worksheet
 * (`Leads`), no shared strings (they would hold every text until the end), each row committed as
 * it is written. Text cells (headers included) are made safe (`xlsxText`); numbers and booleans
 * are typed; empty values leave the cell empty; rows above `startRow` stay empty. With headers,
 * the header row is bold, frozen (the pane below it scrolls) and carries an auto-filter over every
 * column. Column widths fit the header and the first batch of leads (`columnWidths`). `write`
 * waits while the sheet's XML is ahead of the compressor or the reader of `output` (SheetBacklog).
 */
export function createXlsxWriter({ columns, includeHeaders, startRow }: WriterOptions): FileWriter {
  const output = new PassThrough();
  // zlib level 1 (archiver's default, made explicit): markup still shrinks about tenfold.
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
    stream: output,
    useStyles: true,
    useSharedStrings: false,
    zip: { zlib: { level: 1 } },
  });
  const headerRow = includeHeaders ? startRow : 0;
  const sheet = workbook.addWorksheet(SHEET_NAME, {
    views: includeHeaders ? [{ state: "frozen", xSplit: 0, ySplit: headerRow }] : [],
  });
  const backlog = new SheetBacklog(sheet);
  // When `output` is torn down (its reader failed), a write waiting for the sheet and the end
  // waiting for the workbook must fail instead of waiting forever. After a normal end `output`
  // finishes first (and closes before exceljs's commit resolves: that close is no failure).
  let finished = false;
  output.once("finish", () => (finished = true));
  const torn = new Promise<never>((_resolve, reject) => {
    output.once("close", () => {
      if (!finished) reject(new Error("the workbook stream closed before it was written"));
    });
  });
  torn.catch(() => undefined);

  const kinds = columns.map((column) => column.kind);
  let nextRow = startRow;
  let started = false;

  /**
   * Commits a row of cells at the next row number: `valueAt(i)` is column i's value (undefined
   * leaves the cell out). Cells are made one by one (no array of values, no second pass to style
   * them); the row and its cells share one style object each (see DATA_STYLE).
   */
  const commitRow = (valueAt: (i: number) => XlsxValue | undefined, style: Partial<Style>): void => {
    // exceljs's typings leave out the row's own style object (lib/doc/row.js has it).
    const row = sheet.getRow(nextRow) as Row & { style: Partial<Style> };
    nextRow += 1;
    row.style = DATA_STYLE;
    for (let i = 0; i < columns.length; i += 1) {
      const value = valueAt(i);
      if (value === undefined) continue;
      const cell = row.getCell(i + 1);
      cell.value = value;
      cell.style = style;
    }
    row.commit();
  };

  /** Columns (sized by the first rows) and the header: a streaming sheet writes them first. */
  const start = (sample: readonly ExportRow[]): void => {
    if (started) return;
    started = true;
    const headers = columns.map((column) => column.header);
    sheet.columns = columnWidths(headers, sample).map((width) => ({ width }));
    if (includeHeaders) commitRow((i) => xlsxText(headers[i]!), HEADER_STYLE);
  };

  return {
    output,
    async write(batch: RowBatch) {
      const rows = rowsIn(batch);
      start(rows);
      for (const row of rows) {
        commitRow((i) => xlsxValue(kinds[i]!, row[i]), DATA_STYLE);
        if (backlog.due) await Promise.race([backlog.pace(), torn]);
      }
      // The workbook's own reader paces too (and alone, should SheetBacklog not find its stream).
      if (output.writableNeedDrain) await Promise.race([drained(output), torn]);
    },
    async end() {
      start([]);
      if (includeHeaders && columns.length > 0) {
        sheet.autoFilter = {
          from: { row: headerRow, column: 1 },
          to: { row: Math.max(headerRow, nextRow - 1), column: columns.length },
        };
      }
      sheet.commit();
      await Promise.race([workbook.commit(), torn]);
    },
  };
}
