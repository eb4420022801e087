import { parse } from "csv-parse";
import { createReadStream } from "node:fs";
import { open, stat } from "node:fs/promises";
import { extname } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { canonicalFieldName, type RecordForm } from "./record.js";

/** One item of an import source: a raw record to validate, or a line that could not be read. */
export type SourceItem =
  { line: number; value: unknown; form: RecordForm } | { line: number; value?: undefined; error: string };

/** The two file formats an import reads. */
export type ImportFileFormat = "ndjson" | "csv";

const NDJSON_EXTENSIONS = new Set([".ndjson", ".jsonl", ".json"]);

/** The first non-blank character of a file (after a byte-order mark), or "" for an empty file. */
async function firstCharacter(path: string): Promise<string> {
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const head = buffer
      .subarray(0, bytesRead)
      .toString("utf8")
      .replace(/^\uFEFF/, "");
    return head.trimStart().charAt(0);
  } finally {
    await handle.close();
  }
}

/**
 * The format of an import file: by extension (`.ndjson`, `.jsonl`, `.json` / `.csv`), otherwise
 * NDJSON when the first character is `{` and CSV else. A JSON array is refused with a clear message
 * (it cannot be streamed line by line).
 */
export async function detectImportFormat(path: string): Promise<ImportFileFormat> {
  const info = await stat(path).catch(() => undefined);
  if (!info) throw new Error(`cannot read ${path}: no such file`);
  if (!info.isFile()) throw new Error(`cannot read ${path}: not a file`);
  const first = await firstCharacter(path);
  const ext = extname(path).toLowerCase();
  const format: ImportFileFormat = NDJSON_EXTENSIONS.has(ext)
    ? "ndjson"
    : ext === ".csv"
      ? "csv"
      : first === "{" || first === "["
        ? "ndjson"
        : "csv";
  if (format === "ndjson" && first === "[") {
    throw new Error("a JSON array is not read: write one lead object per line (NDJSON)");
  }
  return format;
}

function message(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

/** The records of an NDJSON stream, one per non-blank line, numbered by line (from 1). */
export async function* readNdjson(input: Readable): AsyncGenerator<SourceItem> {
  const lines = createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const raw of lines) {
      line += 1;
      const text = line === 1 ? raw.replace(/^\uFEFF/, "") : raw;
      if (text.trim() === "") continue;
      let item: SourceItem;
      try {
        item = { line, value: JSON.parse(text) as unknown, form: "json" };
      } catch (err) {
        item = { line, error: `invalid JSON: ${message(err)}` };
      }
      yield item;
    }
  } finally {
    lines.close();
    input.destroy();
  }
}

/**
 * The rows of a CSV stream as objects keyed by camelCase field name. The first row is the header
 * (API field names or database-style aliases, any case; unknown columns are ignored). A row is
 * numbered by the line it ends on; a row that cannot be parsed is reported and skipped.
 */
export async function* readCsv(input: Readable): AsyncGenerator<SourceItem> {
  const skipped: Skipped = { items: [], more: 0, lastLine: 0 };
  const parser = parse({
    bom: true,
    info: true,
    relax_column_count: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    on_skip: (err) => {
      const line = typeof err?.lines === "number" ? err.lines : parser.info.lines;
      skipped.lastLine = line;
      // Rows the parser skips are not backpressured: keep few messages, count the rest.
      if (skipped.items.length < 1_000) skipped.items.push({ line, error: `invalid CSV: ${message(err)}` });
      else skipped.more += 1;
      return undefined;
    },
  });
  input.on("error", (err) => parser.destroy(err));
  input.pipe(parser);
  try {
    yield* csvRows(parser, skipped);
  } finally {
    input.destroy();
    parser.destroy();
  }
}

/** Rows the CSV parser skipped since the last record was read. */
interface Skipped {
  items: SourceItem[];
  more: number;
  lastLine: number;
}

function* drain(skipped: Skipped): Generator<SourceItem> {
  const items = skipped.items.splice(0);
  yield* items;
  for (; skipped.more > 0; skipped.more -= 1) {
    yield { line: skipped.lastLine, error: "invalid CSV (one of many rows the parser skipped)" };
  }
}

async function* csvRows(parser: AsyncIterable<unknown>, skipped: Skipped): AsyncGenerator<SourceItem> {
  let header: (string | null)[] | undefined;
  for await (const { record, info } of parser as AsyncIterable<{
    record: string[];
    info: { lines: number };
  }>) {
    yield* drain(skipped);
    if (!header) {
      header = record.map((name) => canonicalFieldName(name));
      if (header.every((name) => name === null)) {
        throw new Error(
          "the CSV header names no lead field (expected columns such as id, companyName, website)",
        );
      }
      continue;
    }
    if (record.length !== header.length) {
      yield {
        line: info.lines,
        error: `expected ${header.length} fields as in the header, found ${record.length}`,
      };
      continue;
    }
    const value: Record<string, string> = {};
    header.forEach((name, i) => {
      if (name !== null) value[name] = record[i] as string;
    });
    yield { line: info.lines, value, form: "csv" };
  }
  yield* drain(skipped);
}

/** The items of an import file, read as a stream in the detected format. */
export async function readImportFile(path: string): Promise<AsyncGenerator<SourceItem>> {
  const format = await detectImportFormat(path);
  const input = createReadStream(path, format === "ndjson" ? { encoding: "utf8" } : {});
  return format === "ndjson" ? readNdjson(input) : readCsv(input);
}
