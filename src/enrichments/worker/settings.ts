import type { Logger } from "pino";
import type { Db } from "../../db/database.js";
import type { Outbound } from "../../outbound/index.js";
import type { FileStorage } from "../../storage/file-storage.js";
import { DEFAULT_CRAWL_OPTIONS, type CrawlOptions } from "../crawler/crawl-site.js";
import type { HostGate } from "../crawler/host-gate.js";

/** How runs are processed (tests shorten the times). */
export interface EnrichmentSettings {
  /** URLs matched against the database per transaction. */
  matchBatch: number;
  /** One task invocation works this long, then hands the run back to the queue. */
  sliceMs: number;
  /** A run whose worker sent no heartbeat this long is taken over (a crashed worker). */
  leaseStaleMs: number;
  /** Sites read at the same time by one worker. */
  liveConcurrency: number;
  /** Least time between two requests to one host (the politeness delay). */
  politenessDelayMs: number;
  /** Live fetching stops this long after the run started: the run ends `partial`. */
  liveTimeLimitMs: number;
  /** How long the link in the results e-mail works. */
  mailLinkMs: number;
  crawl: CrawlOptions;
}

export const DEFAULT_SETTINGS: EnrichmentSettings = {
  matchBatch: 10_000,
  sliceMs: 30_000,
  leaseStaleMs: 120_000,
  liveConcurrency: 192,
  politenessDelayMs: 500,
  liveTimeLimitMs: 12 * 60 * 60 * 1000,
  mailLinkMs: 7 * 24 * 60 * 60 * 1000,
  crawl: DEFAULT_CRAWL_OPTIONS,
};

/** What processing a run needs. */
export interface EnrichmentWorkerDeps {
  db: Db;
  storage: FileStorage;
  outbound: Outbound;
  signingSecret: string;
  publicBaseUrl: string;
  logger: Logger;
  settings?: Partial<EnrichmentSettings>;
}

/** The deps with settings filled in and this process's host gate. */
export interface RunContext extends EnrichmentWorkerDeps {
  settings: EnrichmentSettings;
  gate: HostGate;
}
