import type { Readable } from "node:stream";

/** A stored file, opened. */
export interface StoredFile {
  /** Bytes. */
  size: number;
  body: Readable;
}

/** What a presigned link to a stored file says and how long it works. */
export interface PresignOptions {
  /** Lifetime of the link in whole seconds (counted from `signingDate`). */
  expiresInSeconds: number;
  /** Name the download is saved as (`Content-Disposition: attachment; filename=...`). */
  fileName: string;
  /** `Content-Type` of the download. */
  contentType: string;
  /** The link's signing time (default now); its lifetime is counted from it. */
  signingDate?: Date;
}

/**
 * Where export files and large job answers are kept. Keys are relative paths such as
 * `exports/42/leads-main-2026-11-22.csv`; bodies are streamed both ways so memory does not grow
 * with the file. Two implementations: local disk (the default) and S3-compatible object storage
 * (src/storage/s3.ts); docs/export-history.md, "Where files are stored".
 *
 * A store that cannot be reached makes every method reject with 503 `service_unavailable`
 * (`Retry-After: 30`), never with a raw client error.
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
  /**
   * A link that downloads the file straight from the store, without the API (object storage only:
   * a presigned GET URL). Absent: the API hands out its own signed links (`/api/v1/files/{token}`).
   */
  presignedUrl?(key: string, options: PresignOptions): Promise<string>;
}
