import type { Logger } from "pino";
import type { Db } from "../db/database.js";
import { ApiError } from "../http/errors.js";

/** Seconds a client is told to wait while the list is being built. */
export const SCHEMA_TYPES_RETRY_AFTER = 60;
/** How often a process rebuilds its list (new imports add types). */
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

/**
 * The list of schema types, cached by each API process: built in the background when the process
 * starts (until then `list()` is null: warming), then rebuilt every 10 minutes while the previous
 * list keeps being served. Every process builds its own copy from the database, so processes
 * agree up to one refresh interval.
 */
export class SchemaTypesCache {
  private types: string[] | null = null;
  private building: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly refreshMs = SCHEMA_TYPES_REFRESH_MS,
  ) {}

  /** Starts the first build and the periodic refresh (timers never keep the process alive). */
  start(): this {
    void this.refresh();
    return this;
  }

  /** The sorted list, or null while the first build runs. */
  list(): string[] | null {
    return this.types;
  }

  /** Builds the list now (one build at a time); resolves when it is done or failed. */
  refresh(): Promise<void> {
    if (this.building) return this.building;
    this.building = findDistinctSchemaTypes(this.db)
      .then((types) => {
        this.types = types;
        this.schedule(this.refreshMs);
      })
      .catch((err: unknown) => {
        if (!this.stopped) this.logger.warn({ err }, "building the schema type list failed");
        this.schedule(RETRY_MS);
      })
      .finally(() => {
        this.building = null;
      });
    return this.building;
  }

  /** Stops the refresh timer. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), ms);
    this.timer.unref();
  }
}
