import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import type { FileStorage } from "../storage/file-storage.js";
import type { AnswerComposedBody, JobAnswer } from "./answer.js";

/**
 * JSON bodies of at least this many characters are kept in storage rather than in the jobs table
 * (docs/performance.md, 2026-11-24 "Large job answers"): a refresh of 5,000 entries answers 8 MB,
 * which as `jsonb` took 0.5 s to store and 0.3 s to read back and parse, against 0.02 s as a file
 * that is streamed back as it was written.
 */
export const LARGE_BODY_BYTES = 256 * 1024;

/** The storage folder of a job's large bodies (one per attempt that wrote one). */
export function jobFilesPrefix(jobId: string): string {
  return `jobs/${jobId}/`;
}

/** The storage key of a job attempt's large body. */
export function bodyFileKey(jobId: string, attempt: number): string {
  return `${jobFilesPrefix(jobId)}answer-${attempt}.json`;
}

/** How a stored file becomes a JSON string: its UTF-8 text, or its bytes in base64. */
export type StoredTextEncoding = "text" | "base64";

/**
 * A JSON string value of a job's answer whose text is a file in storage (an export's file in its
 * JSON answer). keepLargeBody writes it into the stored answer, streamed from storage: the file is
 * never held in memory. Anywhere else (JSON.stringify) it throws, so it cannot be stored half-done.
 */
class StoredFileText {
  constructor(
    readonly storageKey: string,
    /** Bytes of the file. */
    readonly size: number,
    readonly encoding: StoredTextEncoding,
  ) {}

  /** Characters of the JSON string at the least (quotes included). */
  minimumLength(): number {
    return 2 + (this.encoding === "base64" ? Math.ceil(this.size / 3) * 4 : this.size);
  }

  toJSON(): string {
    if (!collected) throw new Error("a stored file's text is written only by keepLargeBody");
    return `${PLACEHOLDER}${collected.push(this) - 1}`;
  }
}

/**
 * The text (`text`: UTF-8) or base64 (`base64`) of a stored file of `size` bytes, as a string
 * value of a job's answer body: the answer must be stored through keepLargeBody (storeFinalAnswer
 * with storage, as `job.commit` does). The file must stay in storage until then.
 */
export function storedFileText(storageKey: string, size: number, encoding: StoredTextEncoding): string {
  return new StoredFileText(storageKey, size, encoding) as unknown as string;
}

/** The StoredFileText values met while serialise runs (JSON.stringify is synchronous). */
let collected: StoredFileText[] | null = null;
/** Marks a StoredFileText's place in the serialised body; the random part keeps it from any real value. */
const PLACEHOLDER = `\u0000${randomBytes(6).toString("hex")}:`;
const PLACEHOLDER_STRING = new RegExp(
  `"${JSON.stringify(PLACEHOLDER).slice(1, -1).replace(/\\/g, "\\\\")}(\\d+)"`,
  "g",
);

/** JSON.stringify of a body, with each StoredFileText left as a placeholder string, and those texts. */
function serialise(body: unknown): { text: string; texts: StoredFileText[] } {
  const texts: StoredFileText[] = [];
  collected = texts;
  try {
    return { text: JSON.stringify(body) ?? "", texts };
  } finally {
    collected = null;
  }
}

/**
 * The answer to store: a JSON body of at least `limit` characters is written to storage (under the
 * job's id and attempt) and replaced by a `bodyFile`; any other answer is stored as it is. A body
 * with texts of stored files (storedFileText) has them read into it while the whole stays under
 * `limit`; a larger one is kept as a `composedBody` (its text around the files, which are written
 * into it when it is served): nothing of the files is copied or read now, so the transaction that
 * stores the answer (an export's charge) does not wait for them.
 */
export async function keepLargeBody(
  storage: FileStorage,
  job: { id: string; attempt: number },
  answer: JobAnswer,
  limit = LARGE_BODY_BYTES,
): Promise<JobAnswer> {
  if (!("body" in answer)) return answer;
  const { text, texts } = serialise(answer.body);
  if (texts.length > 0) {
    const least = texts.reduce((sum, t) => sum + t.minimumLength(), text.length);
    if (least >= limit) {
      return { status: answer.status, headers: answer.headers ?? {}, composedBody: composed(text, texts) };
    }
    const small = await withTextsRead(storage, text, texts);
    if (small.length < limit) return { ...answer, body: JSON.parse(small) as unknown };
    return keepBodyFile(storage, job, answer, small);
  }
  return text.length < limit ? answer : keepBodyFile(storage, job, answer, text);
}

/** The answer with its serialised body written to storage under the job's id and attempt. */
async function keepBodyFile(
  storage: FileStorage,
  job: { id: string; attempt: number },
  answer: JobAnswer,
  text: string,
): Promise<JobAnswer> {
  const storageKey = bodyFileKey(job.id, job.attempt);
  await storage.put(storageKey, Buffer.from(text));
  return { status: answer.status, headers: answer.headers ?? {}, bodyFile: { storageKey } };
}

/** The serialised body as the text around its stored files, and those files in the order they appear. */
function composed(text: string, texts: StoredFileText[]): AnswerComposedBody {
  // With the placeholder's capture group, split gives segment, index, segment, ..., segment.
  const parts = text.split(PLACEHOLDER_STRING);
  return {
    segments: parts.filter((_, i) => i % 2 === 0),
    texts: parts
      .filter((_, i) => i % 2 === 1)
      .map((index) => texts[Number(index)]!)
      .map(({ storageKey, size, encoding }) => ({ storageKey, size, encoding })),
  };
}

/** The serialised body with each placeholder replaced by its file's text read whole (small files). */
async function withTextsRead(storage: FileStorage, text: string, texts: StoredFileText[]): Promise<string> {
  const values = await Promise.all(
    texts.map(async (t) => {
      const source = await storage.open(t.storageKey);
      if (!source) throw new Error(`stored file ${t.storageKey} of a job's answer is missing`);
      const chunks: Buffer[] = [];
      for await (const chunk of source.body) chunks.push(chunk as Buffer);
      const bytes = Buffer.concat(chunks);
      return JSON.stringify(t.encoding === "base64" ? bytes.toString("base64") : bytes.toString("utf8"));
    }),
  );
  return text.replace(PLACEHOLDER_STRING, (_match, index: string) => values[Number(index)]!);
}

/**
 * A composed body as the bytes of its JSON text: each segment, and between two segments a stored
 * file as a JSON string, streamed from storage. Undefined when one of its files is no longer
 * stored (every file is opened before anything is sent).
 */
export async function composedBodyStream(
  storage: FileStorage,
  body: AnswerComposedBody,
): Promise<Readable | undefined> {
  const opened = await Promise.all(body.texts.map((t) => storage.open(t.storageKey)));
  if (opened.some((file) => file === undefined)) {
    for (const file of opened) file?.body.destroy();
    return undefined;
  }
  async function* bytes(): AsyncGenerator<Buffer> {
    for (const [i, segment] of body.segments.entries()) {
      yield Buffer.from(segment);
      const text = body.texts[i];
      if (!text) continue;
      const source = opened[i]!.body as AsyncIterable<Buffer>;
      yield QUOTE;
      yield* text.encoding === "base64" ? base64Chunks(source) : jsonStringChunks(source);
      yield QUOTE;
    }
  }
  return Readable.from(bytes());
}

const QUOTE = Buffer.from('"');

/**
 * For each byte, how JSON.stringify escapes it: 0 not at all, 1 as `\u00XX`, otherwise the letter
 * after the backslash (`\n`, `\"`, ...). Only controls, `"` and `\` are escaped.
 */
const ESCAPE = new Uint8Array(256);
for (let byte = 0; byte < 0x20; byte += 1) ESCAPE[byte] = 1;
for (const [byte, letter] of [
  [0x08, "b"],
  [0x09, "t"],
  [0x0a, "n"],
  [0x0c, "f"],
  [0x0d, "r"],
  [0x22, '"'],
  [0x5c, "\\"],
] as const) {
  ESCAPE[byte] = letter.charCodeAt(0);
}
const HEX = Buffer.from("0123456789abcdef");
/** Room for the escaped form of a chunk (at most 6 bytes per byte), grown and reused. */
let scratch = Buffer.alloc(0);

/** One chunk of UTF-8 text as the inside of a JSON string (the chunk itself when nothing needs escaping). */
function escapeChunk(chunk: Buffer): Buffer {
  const n = chunk.length;
  let i = 0;
  while (i < n && ESCAPE[chunk[i]!] === 0) i += 1;
  if (i === n) return chunk;
  if (scratch.length < n * 6) scratch = Buffer.allocUnsafe(n * 6);
  const out = scratch;
  let to = chunk.copy(out, 0, 0, i);
  for (; i < n; i += 1) {
    const byte = chunk[i]!;
    const escape = ESCAPE[byte]!;
    if (escape === 0) {
      out[to++] = byte;
    } else if (escape === 1) {
      out[to++] = 0x5c;
      out[to++] = 0x75;
      out[to++] = 0x30;
      out[to++] = 0x30;
      out[to++] = HEX[byte >> 4]!;
      out[to++] = HEX[byte & 15]!;
    } else {
      out[to++] = 0x5c;
      out[to++] = escape;
    }
  }
  // A copy: the scratch is reused for the next chunk.
  return Buffer.from(out.subarray(0, to));
}

/**
 * UTF-8 text as the inside of a JSON string (what JSON.stringify writes, without the quotes),
 * chunk by chunk. Only ASCII bytes are ever escaped, so a character split across chunks is copied
 * as it is.
 */
export async function* jsonStringChunks(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  for await (const chunk of source) yield escapeChunk(chunk);
}

/** Bytes as base64, chunk by chunk (each chunk cut at a multiple of 3 bytes). */
export async function* base64Chunks(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let rest = Buffer.alloc(0);
  for await (const chunk of source) {
    const bytes = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
    const whole = bytes.length - (bytes.length % 3);
    if (whole > 0) yield Buffer.from(bytes.subarray(0, whole).toString("base64"));
    rest = Buffer.from(bytes.subarray(whole));
  }
  if (rest.length > 0) yield Buffer.from(rest.toString("base64"));
}

/** The file an answer keeps in storage and owns (deleted with the answer), if any. */
export function ownedFileOf(answer: JobAnswer | undefined): string | undefined {
  if (!answer) return undefined;
  if ("bodyFile" in answer) return answer.bodyFile.storageKey;
  if ("file" in answer && !answer.file.shared) return answer.file.storageKey;
  return undefined;
}
