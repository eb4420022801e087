import type { Logger } from "pino";
import type { DbOrTrx } from "../db/database.js";
import { recordKeyUse } from "./key-list-repository.js";

/** A key's last use is written at most this often per process (`lastUsedAt` is to the minute). */
const WRITE_EVERY_MS = 60_000;
/** Keys remembered at most; the oldest are forgotten first (their next use is written again). */
const MAX_REMEMBERED = 10_000;

/**
 * Records when keys are used (`lastUsedAt` of `GET /api-keys`) without a write per request: at most
 * one upsert per key per minute per process, after the answer's way is clear (never awaited by the
 * request). A failed write (the database down) is only logged: the request it came from goes on.
 */
export class KeyUsageRecorder {
  private readonly written = new Map<number, number>();

  constructor(
    private readonly db: DbOrTrx,
    private readonly logger?: Logger,
  ) {}

  used(keyId: number, now = Date.now()): void {
    const last = this.written.get(keyId);
    if (last !== undefined && now - last < WRITE_EVERY_MS) return;
    this.written.delete(keyId);
    this.written.set(keyId, now);
    if (this.written.size > MAX_REMEMBERED) {
      const oldest = this.written.keys().next();
      if (!oldest.done) this.written.delete(oldest.value);
    }
    recordKeyUse(this.db, keyId).catch((err: unknown) => {
      this.written.delete(keyId);
      this.logger?.debug({ err, keyId }, "could not record the key's last use");
    });
  }
}
