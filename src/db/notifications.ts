import pg from "pg";
import type { Logger } from "pino";

/** `application_name` of the listener connection (to find it in `pg_stat_activity`). */
export const LISTENER_APPLICATION_NAME = "svc-listener";

/** What a subscriber is told about its channel. */
export interface ChannelHandlers {
  /** A notification on the channel (its payload; `""` when there is none). */
  message(payload: string): void;
  /**
   * The subscription hears its channel: the first time, and again after every loss. Whatever was
   * sent while it was not heard is lost, so a cache forgets or rebuilds here.
   */
  listening?(): void;
  /** The connection is lost (or the listener stopped): notifications are missed until `listening`. */
  lost?(): void;
}

/** One subscriber of one channel. */
export interface Subscription {
  readonly channel: string;
  /** Whether notifications of the channel are heard right now. */
  readonly listening: boolean;
  /** Resolves once the channel is heard, or once an attempt to listen failed (never rejects). */
  readonly ready: Promise<void>;
  /** Stops delivering to this subscriber (UNLISTEN once a channel has no subscriber left). */
  unsubscribe(): Promise<void>;
}

export interface NotificationListenerOptions {
  /** The database to listen to: a connection string or pg client settings (a pool's `options`). */
  connection: string | pg.ClientConfig;
  logger: Logger;
  /** How often the connection is checked with `select 1`, so a silently dead one is noticed. */
  pingMs?: number;
  /** Longest wait between two reconnection attempts (the wait doubles from 100 ms). */
  maxRetryMs?: number;
}

const FIRST_RETRY_MS = 100;

class ChannelSubscription implements Subscription {
  listening = false;
  closed = false;
  readonly ready: Promise<void>;
  private resolveReady: () => void = () => {};

  constructor(
    private readonly listener: NotificationListener,
    readonly channel: string,
    readonly handlers: ChannelHandlers,
  ) {
    this.ready = new Promise((resolve) => (this.resolveReady = resolve));
  }

  /** The attempt to listen is over (heard or failed): `ready` resolves. */
  settle(): void {
    this.resolveReady();
  }

  unsubscribe(): Promise<void> {
    return this.listener.remove(this);
  }
}

/**
 * The one LISTEN connection of a process, shared by every per-process cache and waiter
 * (`src/auth/key-cache.ts`, `src/jobs/notifier.ts`, `src/leads/schema-types.ts`): each subscribes
 * to its channel. The connection is opened on the first subscription (or `start()`), checked with a
 * ping, and opened again with a doubling backoff when it fails; subscribers are told when it is
 * lost and when they hear their channel again, so a cache can forget what it may have missed.
 */
export class NotificationListener {
  private readonly channels = new Map<string, Set<ChannelSubscription>>();
  private readonly pingMs: number;
  private readonly maxRetryMs: number;
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private connected = false;
  private stopped = false;
  private retryDelayMs = FIRST_RETRY_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: NotificationListenerOptions) {
    this.pingMs = options.pingMs ?? 10_000;
    this.maxRetryMs = options.maxRetryMs ?? 5_000;
  }

  /** Whether the connection is up and listens to every subscribed channel. */
  get listening(): boolean {
    return this.connected;
  }

  /** Opens the connection if it is not open; resolves once it is, or once the attempt failed. */
  start(): Promise<void> {
    return this.connect();
  }

  /**
   * Delivers the channel's notifications to `handlers` (in the order Postgres sends them) until
   * `unsubscribe()`. Opens the connection if it is not open yet.
   */
  subscribe(channel: string, handlers: ChannelHandlers): Subscription {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
    const sub = new ChannelSubscription(this, channel, handlers);
    if (this.stopped) {
      sub.settle();
      return sub;
    }
    let subs = this.channels.get(channel);
    if (!subs) this.channels.set(channel, (subs = new Set()));
    subs.add(sub);
    const client = this.client;
    if (client && this.connected) {
      // LISTEN is idempotent and a client runs its queries in order: once this one is done, the
      // channel is heard, whoever else listens to it.
      client.query(`listen ${channel}`).then(
        () => {
          if (this.client === client && this.connected) this.heard(sub);
        },
        (err: unknown) => this.lost(client, err),
      );
    } else if (!this.client && !this.retryTimer) {
      void this.connect();
    }
    // Otherwise a connection is being opened (it listens to every channel) or will be on retry.
    return sub;
  }

  /** Closes the connection; every subscriber is told it is lost and nothing is delivered any more. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.pingTimer);
    const client = this.client;
    this.client = undefined;
    this.connected = false;
    this.tellLost();
    await client?.end().catch(() => {});
  }

  /** Removes a subscriber (what Subscription.unsubscribe calls). */
  async remove(sub: ChannelSubscription): Promise<void> {
    if (sub.closed) return;
    sub.closed = true;
    sub.listening = false;
    sub.settle();
    const subs = this.channels.get(sub.channel);
    if (!subs?.delete(sub) || subs.size > 0) return;
    this.channels.delete(sub.channel);
    const client = this.client;
    if (client && this.connected) await client.query(`unlisten ${sub.channel}`).catch(() => {});
  }

  private connect(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.client) return this.connecting ?? Promise.resolve();
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const config =
      typeof this.options.connection === "string"
        ? { connectionString: this.options.connection }
        : this.options.connection;
    const client = new pg.Client({
      ...config,
      keepAlive: true,
      query_timeout: 5_000,
      application_name: LISTENER_APPLICATION_NAME,
    });
    this.client = client;
    client.on("notification", (msg) => this.deliver(msg.channel, msg.payload ?? ""));
    client.on("error", (err) => this.lost(client, err));
    client.on("end", () => this.lost(client));
    this.connecting = this.open(client).finally(() => {
      if (this.client === client || !this.client) this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(client: pg.Client): Promise<void> {
    try {
      await client.connect();
      // A channel subscribed while this runs is in the map by the time the loop reaches it.
      for (const channel of this.channels.keys()) await client.query(`listen ${channel}`);
    } catch (err) {
      this.lost(client, err);
      return;
    }
    if (this.client !== client) return;
    this.connected = true;
    this.retryDelayMs = FIRST_RETRY_MS;
    this.pingTimer = setInterval(() => {
      client.query("select 1").catch((err: unknown) => this.lost(client, err));
    }, this.pingMs);
    this.pingTimer.unref();
    for (const subs of this.channels.values()) for (const sub of subs) this.heard(sub);
  }

  private heard(sub: ChannelSubscription): void {
    if (sub.closed || sub.listening) return;
    sub.listening = true;
    sub.settle();
    this.call(sub, "listening");
  }

  private deliver(channel: string, payload: string): void {
    for (const sub of this.channels.get(channel) ?? []) {
      if (sub.listening) this.call(sub, "message", payload);
    }
  }

  /** Calls a subscriber's handler; a throwing handler is logged and harms no other subscriber. */
  private call(sub: ChannelSubscription, handler: keyof ChannelHandlers, payload = ""): void {
    try {
      sub.handlers[handler]?.(payload);
    } catch (err) {
      this.options.logger.error({ err, channel: sub.channel, handler }, "notification handler failed");
    }
  }

  private tellLost(): void {
    for (const subs of this.channels.values()) {
      for (const sub of subs) {
        sub.settle();
        if (!sub.listening) continue;
        sub.listening = false;
        this.call(sub, "lost");
      }
    }
  }

  /** The connection failed or ended: tell the subscribers, then open a new one after a backoff. */
  private lost(client: pg.Client, err?: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.connected = false;
    clearInterval(this.pingTimer);
    client.end().catch(() => {});
    this.tellLost();
    if (this.stopped) return;
    this.options.logger.warn({ err }, "notification listener lost; listening again after a pause");
    const delay = this.retryDelayMs;
    this.retryDelayMs = Math.min(this.retryDelayMs * 2, this.maxRetryMs);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, delay);
    this.retryTimer.unref();
  }
}
