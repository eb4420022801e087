import { createWriteStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";

/** NDJSON text of `records` in chunks of about 64 KB. */
function* ndjsonChunks(records: Iterable<unknown>): Generator<string> {
  let chunk = "";
  for (const record of records) {
    chunk += `${JSON.stringify(record)}\n`;
    if (chunk.length >= 65_536) {
      yield chunk;
      chunk = "";
    }
  }
  if (chunk !== "") yield chunk;
}

/**
 * Writes records as an NDJSON file (one JSON object per line), streamed with backpressure, so a
 * lazy iterable of any length needs no memory. Resolves once the file is complete.
 */
export async function writeNdjsonFile(path: string, records: Iterable<unknown>): Promise<void> {
  await pipeline(Readable.from(ndjsonChunks(records)), createWriteStream(path));
}
