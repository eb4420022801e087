import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, open, rename, rm, stat } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { randomUUID } from "node:crypto";
import type { FileStorage, StoredFile } from "./file-storage.js";
import { storageUnavailable } from "./storage-errors.js";

/**
 * Write failures of a disk that cannot take the file right now (full, over quota, read-only, I/O
 * error): 503 `service_unavailable` like a store that cannot be reached, not a bare 500
 * (docs/reliability.md, scenario storage-full). The partial temporary file is removed first.
 */
const DISK_REFUSED = new Set(["ENOSPC", "EDQUOT", "EROFS", "EIO"]);

/** Bytes read per chunk when a file is streamed (fewer, larger chunks than the default 64 KB). */
const READ_CHUNK_BYTES = 1024 * 1024;

/** Makes a folder's entries (a rename into it) survive a crash. */
async function syncFolder(path: string): Promise<void> {
  const folder = await open(path, "r");
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

/**
 * Files on local disk under `root` (by default `DATA_DIR/files`). Writes are atomic and durable:
 * a temporary file flushed to disk, renamed into place, then the folder flushed, so a file that
 * `put` reported written survives a crash whole (the transaction that records it commits after).
 */
export class LocalDiskStorage implements FileStorage {
  private readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  private pathOf(key: string): string {
    const path = resolve(this.root, key);
    if (!path.startsWith(this.root + sep)) throw new Error(`invalid storage key: ${key}`);
    return path;
  }

  async put(key: string, body: Readable | Buffer): Promise<{ size: number }> {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    const temp = join(dirname(path), `.${randomUUID()}.tmp`);
    try {
      await pipeline(
        Buffer.isBuffer(body) ? Readable.from([body]) : body,
        createWriteStream(temp, { flush: true }),
      );
      await rename(temp, path);
      await syncFolder(dirname(path));
    } catch (err) {
      await rm(temp, { force: true });
      if (DISK_REFUSED.has((err as { code?: string }).code ?? "")) throw storageUnavailable(err);
      throw err;
    }
    return { size: (await stat(path)).size };
  }

  async get(key: string): Promise<Readable | undefined> {
    const path = this.pathOf(key);
    try {
      await stat(path);
    } catch {
      return undefined;
    }
    return createReadStream(path, { highWaterMark: READ_CHUNK_BYTES });
  }

  async open(key: string): Promise<StoredFile | undefined> {
    const path = this.pathOf(key);
    let size: number;
    try {
      size = (await stat(path)).size;
    } catch {
      return undefined;
    }
    return { size, body: createReadStream(path, { highWaterMark: READ_CHUNK_BYTES }) };
  }

  async size(key: string): Promise<number | undefined> {
    try {
      return (await stat(this.pathOf(key))).size;
    } catch {
      return undefined;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async deletePrefix(prefix: string): Promise<void> {
    if (!prefix.endsWith("/")) throw new Error(`a prefix to delete names a folder: ${prefix}`);
    await rm(this.pathOf(prefix.slice(0, -1)), { recursive: true, force: true });
  }
}
