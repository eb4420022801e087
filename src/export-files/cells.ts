/** Longest text a spreadsheet cell holds (Excel's limit); longer values are cut. */
export const MAX_CELL_CHARS = 32_767;

/** Separator of list values (`buyingSignalType`, `founders`, ...) in one CSV or XLSX cell. */
export const LIST_SEPARATOR = "; ";

/** Characters that make a spreadsheet read a cell as a formula when they start it. */
const FORMULA_START = /^[=+\-@\t\r]/;

/** Characters XML 1.0 (and so XLSX) cannot hold. */
// eslint-disable-next-line no-control-regex -- these control characters are exactly what is removed
const XML_INVALID = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

/**
 * A text a spreadsheet will not run: a value starting with `=`, `+`, `-`, `@`, tab or CR gets a
 * leading `'` (the OWASP CSV-injection advice), then the text is cut to 32,767 characters
 * (never inside a surrogate pair).
 */
export function safeCellText(text: string): string {
  const safe = FORMULA_START.test(text) ? `'${text}` : text;
  if (safe.length <= MAX_CELL_CHARS) return safe;
  const cut = /[\uD800-\uDBFF]/.test(safe.charAt(MAX_CELL_CHARS - 1)) ? MAX_CELL_CHARS - 1 : MAX_CELL_CHARS;
  return safe.slice(0, cut);
}

/** A CSV field that must be quoted: it holds a comma, a quote, CR or LF. */
const NEEDS_QUOTES = /[",\r\n]/;
const QUOTES = /"/g;

/** One CSV field (RFC 4180): quoted, with quotes doubled, when it holds `,`, `"`, CR or LF. */
export function csvField(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replace(QUOTES, '""')}"` : text;
}

/** A text cell of an XLSX file: characters XML cannot hold removed, then made safe. */
export function xlsxCellText(text: string): string {
  return safeCellText(text.replace(XML_INVALID, ""));
}
