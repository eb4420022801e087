import type { Logger } from "pino";
import type { Db } from "../db/database.js";
import type { NotificationListener, Subscription } from "../db/notifications.js";
import { ApiError } from "../http/errors.js";
import { LEADS_IMPORTED_CHANNEL } from "./import/announce.js";

/** Seconds a client is told to wait while the list is being built. */
export const SCHEMA_TYPES_RETRY_AFTER = 60;
/**
 * How often a process rebuilds its list even without a notification: the safety net for changes
 * nobody announced (an import killed between its last commit and its NOTIFY, leads written by
 * hand or by another path). Imports announce themselves, so this only bounds how stale such a
 * change can stay; at one full scan of the leads per process per period, 10 minutes keeps the
 * bound and the cost of the time before imports were announced.
 */
export const SCHEMA_TYPES_REFRESH_MS = 10 * 60_000;
/** Wait before trying again after a failed build. */
const RETRY_MS = 30_000;

/** Every distinct schema.org type of the lead database, sorted (a scan of every lead). */
export async function findDistinctSchemaTypes(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom("leads")
    .select((eb) => eb.fn<string>("unnest", ["website_schema_types"]).as("type"))
    .distinct()
    .orderBy("type")
    .execute();
  return rows.map((r) => r.type).filter((t) => t !== null && t !== "");
}

/** 503 `schema_types_warming` with Retry-After 60. */
export function schemaTypesWarming(): ApiError {
  return new ApiError(
    503,
    "schema_types_warming",
    `The list of schema types is being built after a start; retry in ${SCHEMA_TYPES_RETRY_AFTER} seconds.`,
    undefined,
    { "Retry-After": String(SCHEMA_TYPES_RETRY_AFTER) },
  );
}

export interface SchemaTypesCacheOptions {
  /**
   * The process's shared listener (`src/db/notifications.ts`): the list is rebuilt on every
   * `leads_imported` notification and when the channel is heard again after a loss.
   */
  notifications: NotificationListener;
  /** Period of the safety-net rebuild (default SCHEMA_TYPES_REFRESH_MS). */
  refreshMs?: number;
}

/**
 * The list of schema types, cached by each API process (create one per process, pass it to the
 * lead handlers, `stop()` it on shutdown). Built in the background when the process starts (until
 * then `list()` is null: warming), then rebuilt, while the previous list keeps being served,
 * whenever an import announces itself (`src/leads/import/announce.ts`), whenever the listener is
 * back after its connection dropped (an announcement may have been missed meanwhile), and every
 * `refreshMs` as a safety net. One build runs at a time; requests that arrive during a build
 * cause exactly one more build after it.
 */
export class SchemaTypesCache {
  private types: string[] | null = null;
  /** The running build and the one more it may owe (see `refresh`). */
  private building: Promise<void> | null = null;
  private again = false;
  /** Whether an announcement may have been missed since the last build began (not heard then). */
  private missed = true;
  private started = false;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private subscription: Subscription | undefined;
  private readonly refreshMs: number;
  private completed = 0;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly options: SchemaTypesCacheOptions,
  ) {
    this.refreshMs = options.refreshMs ?? SCHEMA_TYPES_REFRESH_MS;
  }

  /**
   * Subscribes to announcements, then starts the first build (right after the channel is heard,
   * so no announcement falls between the two). Timers never keep the process alive.
   */
  start(): this {
    if (this.started || this.stopped) return this;
    this.started = true;
    this.subscription = this.options.notifications.subscribe(LEADS_IMPORTED_CHANNEL, {
      message: () => void this.refresh(),
      lost: () => {
        this.missed = true;
      },
      listening: () => {
        // Heard again after a loss: what was announced meanwhile is unknown. (The first time, the
        // first build below has not begun, or began unheard and is owed one more.)
        if (this.missed && (this.types !== null || this.building)) void this.refresh();
      },
    });
    const heard = this.subscription?.ready ?? Promise.resolve();
    void heard.then(() => {
      if (this.types === null && !this.building) void this.refresh();
    });
    return this;
  }

  /** The sorted list, or null while the first build runs. */
  list(): string[] | null {
    return this.types;
  }

  /** How many builds have finished (for tests and diagnostics). */
  get builds(): number {
    return this.completed;
  }

  /**
   * Builds the list now. During a build this asks for one more after it (however many requests
   * arrive); resolves when the builds owed at the time of the call are done (or failed).
   */
  refresh(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.building) {
      this.again = true;
      return this.building;
    }
    this.building = this.buildWhileAsked().finally(() => {
      this.building = null;
    });
    return this.building;
  }

  /** Stops the timers and the subscription. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const subscription = this.subscription;
    this.subscription = undefined;
    await subscription?.unsubscribe();
  }

  private async buildWhileAsked(): Promise<void> {
    do {
      this.again = false;
      await this.build();
    } while (this.again && !this.stopped);
  }

  private async build(): Promise<void> {
    // Announcements sent from here on are heard (a later build follows), unless nothing listens.
    this.missed = !(this.subscription?.listening ?? false);
    try {
      this.types = await findDistinctSchemaTypes(this.db);
      this.completed += 1;
      this.schedule(this.refreshMs);
    } catch (err) {
      if (!this.stopped) this.logger.warn({ err }, "building the schema type list failed");
      this.schedule(RETRY_MS);
    }
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), ms);
    this.timer.unref();
  }
}
