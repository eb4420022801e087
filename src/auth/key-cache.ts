import type { Logger } from "pino";
import type { NotificationListener, Subscription } from "../db/notifications.js";
import type { KeyRecord } from "./repository.js";

/** `application_name` of the listener connection: the shared listener's (src/db/notifications.ts). */
export { LISTENER_APPLICATION_NAME } from "../db/notifications.js";

/** Channel of the triggers of migration 0600: payload an account id, or `*` for everything. */
export const AUTH_CACHE_CHANNEL = "auth_cache";

export interface KeyCacheOptions {
  /** The process's shared listener (`src/db/notifications.ts`): the cache subscribes to `auth_cache`. */
  notifications: NotificationListener;
  logger: Logger;
  /** Safety net: an entry is read again from Postgres after this long. */
  ttlMs?: number;
  /** Most entries kept; the oldest are dropped first. */
  maxEntries?: number;
}

interface Entry {
  record: KeyRecord;
  expiresAt: number;
}

/**
 * A per-process cache of API-key lookups (by key hash) that stays correct across processes:
 * triggers on `api_keys` and `accounts` NOTIFY every process when a key changes (revoked,
 * renamed, deleted) or an account's plan or subscription status changes, and the affected
 * entries are dropped at once. The cache is used only while its subscription hears `auth_cache`;
 * when the listener connection drops everything is forgotten (notifications may have been missed)
 * and lookups go to Postgres until it is back. Unknown keys are never cached, so a new key works
 * at once. A change made by this process is applied to its cache by the caller (see `revokeKey`
 * in `src/auth/service.ts`), so its very next request sees it.
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly listener: NotificationListener;
  private subscription: Subscription | undefined;
  /** Bumped on every invalidation: a lookup that started before one must not fill the cache. */
  private generation = 0;

  constructor(options: KeyCacheOptions) {
    this.ttlMs = options.ttlMs ?? 30_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.listener = options.notifications;
  }

  /** Subscribes to `auth_cache`. Never throws: until the channel is heard every lookup reads Postgres. */
  async start(): Promise<void> {
    this.subscription ??= this.listener.subscribe(AUTH_CACHE_CHANNEL, {
      message: (payload) => this.onNotification(payload),
      // Changes made while nothing was heard are unknown: start from nothing, and keep nothing
      // while the connection is down (lookups check `listening`).
      listening: () => this.forget(),
      lost: () => this.forget(),
    });
    await this.subscription.ready;
  }

  /** Ends the subscription; the cache is no longer used. */
  async stop(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = undefined;
    this.forget();
    await subscription?.unsubscribe();
  }

  private get listening(): boolean {
    return this.subscription?.listening ?? false;
  }

  /** Whether lookups are currently served from memory (the listener is up). */
  get active(): boolean {
    return this.listening;
  }

  /** How many keys are kept. */
  get size(): number {
    return this.entries.size;
  }

  /** Whether a key is kept (its next lookup would not read Postgres). */
  has(keyHash: string): boolean {
    return this.listening && this.entries.has(keyHash);
  }

  /**
   * The key record for a hash: from memory while the listener is up and the entry is fresh,
   * otherwise through `load` (the Postgres lookup), whose answer is then kept.
   */
  async lookup(
    keyHash: string,
    load: (keyHash: string) => Promise<KeyRecord | undefined>,
  ): Promise<KeyRecord | undefined> {
    if (this.listening) {
      const entry = this.entries.get(keyHash);
      if (entry && entry.expiresAt > Date.now()) return entry.record;
    }
    const generation = this.generation;
    const record = await load(keyHash);
    if (record && this.listening && generation === this.generation) this.remember(keyHash, record);
    return record;
  }

  /** Drops the entries of one account (its keys or its subscription changed). */
  invalidateAccount(accountId: number): void {
    this.generation += 1;
    for (const [hash, entry] of this.entries) {
      if (entry.record.accountId === accountId) this.entries.delete(hash);
    }
  }

  /** Drops every entry. */
  forget(): void {
    this.generation += 1;
    this.entries.clear();
  }

  private remember(keyHash: string, record: KeyRecord): void {
    this.entries.delete(keyHash);
    this.entries.set(keyHash, { record, expiresAt: Date.now() + this.ttlMs });
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  private onNotification(payload: string | undefined): void {
    const accountId = Number(payload);
    if (payload && Number.isInteger(accountId)) this.invalidateAccount(accountId);
    else this.forget();
  }
}
