import pg from "pg";
import type { Logger } from "pino";
import type { KeyRecord } from "./repository.js";

/** Channel of the triggers of migration 0600: payload an account id, or `*` for everything. */
export const AUTH_CACHE_CHANNEL = "auth_cache";

export interface KeyCacheOptions {
  /** Database whose `auth_cache` notifications to listen to (the one the keys live in). */
  connectionString: string;
  logger: Logger;
  /** Safety net: an entry is read again from Postgres after this long. */
  ttlMs?: number;
  /** Most entries kept; the oldest are dropped first. */
  maxEntries?: number;
  /** How often the listener connection is checked (a silently dead connection is noticed). */
  pingMs?: number;
}

/** `application_name` of the listener connection (to find it in `pg_stat_activity`). */
export const LISTENER_APPLICATION_NAME = "svc-auth-cache";

/** The caches of this process that are running (see forgetAccountInThisProcess). */
const running = new Set<KeyCache>();

/**
 * Drops an account's keys from every cache of this process at once. Other processes hear of the
 * change through the triggers' notification (delivered within milliseconds); this makes a change
 * made by this process visible to its very next request.
 */
export function forgetAccountInThisProcess(accountId: number): void {
  for (const cache of running) cache.invalidateAccount(accountId);
}

interface Entry {
  record: KeyRecord;
  expiresAt: number;
}

/**
 * A per-process cache of API-key lookups (by key hash) that stays correct across processes:
 * triggers on `api_keys` and `accounts` NOTIFY every process when a key changes (revoked,
 * renamed, deleted) or an account's plan or subscription status changes, and the affected
 * entries are dropped at once. The cache is used only while its LISTEN connection is up; when that
 * connection drops everything is forgotten (notifications may have been missed) and lookups go to
 * Postgres until it is back. Unknown keys are never cached, so a new key works at once.
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly pingMs: number;
  private client: pg.Client | undefined;
  private listening = false;
  private stopped = false;
  /** Bumped on every invalidation: a lookup that started before one must not fill the cache. */
  private generation = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private retryDelayMs = 100;

  constructor(private readonly options: KeyCacheOptions) {
    this.ttlMs = options.ttlMs ?? 30_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.pingMs = options.pingMs ?? 10_000;
  }

  /** Connects the listener. Never throws: until it is connected every lookup reads Postgres. */
  async start(): Promise<void> {
    running.add(this);
    await this.connect();
  }

  /** Closes the listener; the cache is no longer used. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.listening = false;
    running.delete(this);
    clearTimeout(this.retryTimer);
    clearInterval(this.pingTimer);
    this.forget();
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
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

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({
      connectionString: this.options.connectionString,
      keepAlive: true,
      query_timeout: 5_000,
      application_name: LISTENER_APPLICATION_NAME,
    });
    this.client = client;
    client.on("notification", (msg) => {
      if (msg.channel === AUTH_CACHE_CHANNEL) this.onNotification(msg.payload);
    });
    client.on("error", (err) => this.lost(client, err));
    client.on("end", () => this.lost(client));
    try {
      await client.connect();
      await client.query(`listen ${AUTH_CACHE_CHANNEL}`);
    } catch (err) {
      this.lost(client, err);
      return;
    }
    if (this.stopped || this.client !== client) return;
    // Changes made while no listener was connected were not heard: start from nothing.
    this.forget();
    this.listening = true;
    this.retryDelayMs = 100;
    this.pingTimer = setInterval(() => {
      client.query("select 1").catch((err: unknown) => this.lost(client, err));
    }, this.pingMs);
    this.pingTimer.unref();
  }

  /** The listener connection failed or ended: stop using the cache, forget it, reconnect. */
  private lost(client: pg.Client, err?: unknown): void {
    if (this.client !== client) return;
    this.listening = false;
    this.forget();
    clearInterval(this.pingTimer);
    this.client = undefined;
    client.end().catch(() => {});
    if (this.stopped) return;
    this.options.logger.warn(
      { err },
      "auth cache listener lost; keys are read from Postgres until it is back",
    );
    const delay = this.retryDelayMs;
    this.retryDelayMs = Math.min(this.retryDelayMs * 2, 5_000);
    this.retryTimer = setTimeout(() => void this.connect(), delay);
    this.retryTimer.unref();
  }
}
