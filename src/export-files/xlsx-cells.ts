import type { CellRichTextValue } from "exceljs";
import { MAX_CELL_CHARS, xlsxCellText } from "./cells.js";
import type { ColumnKind } from "./columns.js";

/** A cell value as exceljs's streaming writer takes it. */
export type XlsxValue = string | number | boolean | CellRichTextValue;

/**
 * Text that exceljs's plain string cell (`t="str"`, a `<v>` element) would not keep as it is: a
 * CR (XML parsers read a raw CR as LF, and exceljs writes it raw), white space at either end, or
 * text that looks like an OOXML `_xHHHH_` escape (which Excel decodes).
 */
const NEEDS_INLINE = /\r|^\s|\s$|_x[0-9a-f]{4}_/i;
const XSTRING_ESCAPE = /_(x[0-9a-f]{4}_)/gi;

/**
 * Text some rule of `xlsxText` changes: characters XML cannot hold, a formula start (or white
 * space) first, what NEEDS_INLINE matches. Most text matches nothing, and one scan tells.
 */
// eslint-disable-next-line no-control-regex -- the control characters xlsxCellText removes
const TOUCHED = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF\r]|^[\s=+\-@]|\s$|_x[0-9a-f]{4}_/i;
const CR = /\r/g;

/**
 * The exceljs value of a text cell, or undefined for an empty cell. Text is made safe first
 * (`xlsxCellText`: characters XML cannot hold removed, formulas neutralised, cut at 32,767). Most
 * text is a plain string; text NEEDS_INLINE matches becomes an inline string (`<is><r><t>`, which
 * exceljs marks `xml:space="preserve"` when it starts or ends with white space) holding CR as the
 * OOXML escape `_x000D_` and a literal `_xHHHH_` escaped as `_x005F_xHHHH_`, which Excel and
 * exceljs decode back.
 */
export function xlsxText(value: string): string | CellRichTextValue | undefined {
  if (value.length <= MAX_CELL_CHARS && !TOUCHED.test(value)) return value === "" ? undefined : value;
  const text = xlsxCellText(value);
  if (text === "") return undefined;
  if (!NEEDS_INLINE.test(text)) return text;
  return { richText: [{ text: text.replace(XSTRING_ESCAPE, "_x005F_$1").replace(CR, "_x000D_") }] };
}

/**
 * The exceljs value of a `text`-encoded export value in a column of `kind`: numbers and booleans
 * typed (a number that does not parse leaves the cell empty), text as `xlsxText`; undefined (an
 * empty cell) for a missing or empty value.
 */
export function xlsxValue(kind: ColumnKind, value: string | null | undefined): XlsxValue | undefined {
  if (value === null || value === undefined || value === "") return undefined;
  switch (kind) {
    case "number": {
      const number = Number(value);
      return Number.isFinite(number) ? number : undefined;
    }
    case "boolean":
      return value === "true";
    default:
      return xlsxText(value);
  }
}

/**
 * Bounds of a column's width, in characters: at least a little wider than Excel's default (about
 * 8.43; exceljs leaves a width of exactly 9 out as its default), long text is cut off.
 */
export const MIN_COLUMN_WIDTH = 10;
export const MAX_COLUMN_WIDTH = 50;

/**
 * Column widths (characters) fitting the header and some sample rows of `text`-encoded values,
 * with a margin for the auto-filter button, between MIN_COLUMN_WIDTH and MAX_COLUMN_WIDTH. A
 * streaming sheet writes its columns before its first row, so the sample is what is known by then.
 */
export function columnWidths(
  headers: readonly string[],
  sample: readonly (readonly (string | null)[])[],
): number[] {
  return headers.map((header, i) => {
    let longest = xlsxCellText(header).length;
    for (const row of sample) {
      const length = row[i]?.length ?? 0;
      if (length > longest) longest = length;
      if (longest >= MAX_COLUMN_WIDTH) break;
    }
    return Math.min(MAX_COLUMN_WIDTH, Math.max(MIN_COLUMN_WIDTH, longest + 3));
  });
}
