import type { Readable } from "node:stream";

/** A stored file, opened. */
export interface StoredFile {
  /** Bytes. */
  size: number;
  body: Readable;
}

/**
 * Where export files and large job answers are kept. Keys are relative paths such as
 * `exports/42/leads-main-2026-11-22.csv`; bodies are streamed both ways so memory does not grow
 * with the file. The local-disk implementation can be replaced by object storage.
 */
export interface FileStorage {
  /** Writes the whole stream under `key` (replacing any file there); resolves with its size. */
  put(key: string, body: Readable | Buffer): Promise<{ size: number }>;
  /** A stream of the file, or undefined when there is none. */
  get(key: string): Promise<Readable | undefined>;
  /** The file opened to be served: its size and a stream of it; undefined when there is none. */
  open(key: string): Promise<StoredFile | undefined>;
  /** The file's size in bytes, or undefined when there is none. */
  size(key: string): Promise<number | undefined>;
  delete(key: string): Promise<void>;
  /** Removes every file whose key starts with `prefix` (a folder such as `exports/42/abc/`). */
  deletePrefix(prefix: string): Promise<void>;
}
