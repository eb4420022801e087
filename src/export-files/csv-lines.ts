import { csvField, MAX_CELL_CHARS, safeCellText } from "./cells.js";
import type { Column } from "./columns.js";

/**
 * Finished CSV lines of some leads (CRLF after each), rendered ahead of the writer: what a CSV
 * export reads from the database instead of rows (see csvLinesFromCopy). Sliced by lead like an
 * array of rows.
 */
export class CsvLines {
  /**
   * @param bytes the lines, UTF-8
   * @param ends where each lead's line ends in `bytes` (exclusive), in order
   */
  constructor(
    readonly bytes: Buffer,
    readonly ends: Uint32Array,
  ) {}

  /** Leads (lines) held. */
  get length(): number {
    return this.ends.length;
  }

  /** The lines of leads `from` (inclusive) to `to` (exclusive). */
  slice(from: number, to: number): CsvLines {
    if (to <= from) return new CsvLines(this.bytes.subarray(0, 0), new Uint32Array(0));
    const start = from === 0 ? 0 : this.ends[from - 1]!;
    const ends = this.ends.slice(from, to).map((end) => end - start);
    return new CsvLines(this.bytes.subarray(start, this.ends[to - 1]!), ends);
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const DOT = 0x2e;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;
const APOSTROPHE = 0x27;
/** First bytes that make a spreadsheet run a text cell as a formula (see safeCellText). */
const FORMULA_START = new Uint8Array(256);
for (const c of "=+-@\t\r") FORMULA_START[c.charCodeAt(0)] = 1;

/** The value of a CSV field as written (`"a""b"` is `a"b`). */
function fieldValue(field: Buffer): string {
  if (field[0] !== QUOTE) return field.toString("utf8");
  return field.toString("utf8", 1, field.length - 1).replaceAll('""', '"');
}

/**
 * The CSV lines of PostgreSQL's COPY CSV output of `columns` (one line per lead; text cells with
 * NULL for an empty value, numbers and booleans as their literal, spacers NULL), finished to the
 * CSV writer's rules in one pass over the bytes: a text cell that a spreadsheet would run as a
 * formula gets a leading `'` (inside its quotes), a text cell of 32,767 bytes or more is decoded
 * and made safe like any other (cut at 32,767 characters), and each line ends with CRLF. COPY
 * already quotes exactly the fields the writer quotes (a comma, quote, CR or LF) and doubles
 * quotes (besides a lone `\.`, unquoted here), so the result is byte for byte what the writer
 * makes of the same rows.
 */
export function csvLinesFromCopy(copied: Buffer, columns: readonly Column[]): CsvLines {
  const text = columns.map((column) => column.kind === "text");
  const length = copied.length;
  // Room for a CR per line and a `'` per cell (LFs inside quoted values make this an overestimate).
  let feeds = 0;
  for (let at = copied.indexOf(LF); at !== -1; at = copied.indexOf(LF, at + 1)) feeds += 1;
  const out = Buffer.allocUnsafe(length + feeds * (1 + columns.length));
  const ends: number[] = [];
  let written = 0;
  /** Start of the bytes read but not yet copied to `out`. */
  let pending = 0;
  const copyUpTo = (at: number) => {
    written += copied.copy(out, written, pending, at);
    pending = at;
  };

  let at = 0;
  let column = 0;
  while (at < length) {
    const start = at;
    const quoted = copied[at] === QUOTE;
    if (quoted) {
      at += 1;
      for (;;) {
        const quote = copied.indexOf(QUOTE, at);
        if (quote === -1) throw new Error("COPY output ends inside a quoted field");
        at = quote + 1;
        if (copied[at] !== QUOTE) break;
        at += 1;
      }
    } else {
      while (at < length && copied[at] !== COMMA && copied[at] !== LF) at += 1;
    }
    if (at - start === 4 && copied[start + 1] === BACKSLASH && copied[start + 2] === DOT && quoted) {
      // COPY quotes a lone `\.` (its end-of-data marker) in a one-column line; the writer does not.
      copyUpTo(start);
      pending = start + 1;
      copyUpTo(start + 3);
      pending = at;
    } else if (text[column] && at > start) {
      if (at - start >= MAX_CELL_CHARS) {
        // Long enough that the cap may cut it: decode and write it as the writer would.
        copyUpTo(start);
        written += out.write(csvField(safeCellText(fieldValue(copied.subarray(start, at)))), written);
        pending = at;
      } else {
        const first = quoted ? start + 1 : start;
        if (FORMULA_START[copied[first]!]) {
          copyUpTo(first);
          out[written++] = APOSTROPHE;
        }
      }
    }
    if (at >= length) throw new Error("COPY output does not end with a line feed");
    if (copied[at] === COMMA) {
      column += 1;
      at += 1;
      continue;
    }
    if (column !== columns.length - 1 && columns.length > 0) {
      throw new Error(`COPY output has a line of ${column + 1} fields, ${columns.length} expected`);
    }
    copyUpTo(at);
    out[written++] = CR;
    at += 1; // the LF itself is copied with the next run
    ends.push(written + 1);
    column = 0;
  }
  copyUpTo(length);
  return new CsvLines(out.subarray(0, written), Uint32Array.from(ends));
}
