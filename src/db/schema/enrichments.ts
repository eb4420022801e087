import type { ColumnType, Generated, JSONColumnType } from "kysely";
import type { CreatedAt, NullableTimestamp, Timestamp } from "./accounts.js";

/** A bigint column read back as a string by pg, written as a number. */
type Tenths = ColumnType<string, number | bigint, number | bigint>;

/** One enrichment run (`POST /enrichments`). */
export interface EnrichmentRunsTable {
  id: Generated<number>;
  account_id: number;
  status: Generated<string>;
  contact_types: string;
  database_match_percent: number;
  max_credits_tenths: ColumnType<string | null, number | null, number | null>;
  limit_tenths: Tenths;
  email_results: boolean;
  submitted_count: number;
  duplicates_removed: number;
  skipped_invalid: number;
  url_count: number;
  processed: Generated<number>;
  /** Rows up to this position have been matched against the database. */
  match_cursor: Generated<number>;
  db_matched: Generated<number>;
  db_charged: Generated<number>;
  db_free: Generated<number>;
  db_skipped_budget: Generated<number>;
  db_no_contact: Generated<number>;
  live_sent: Generated<number>;
  live_delivered: Generated<number>;
  live_failed: Generated<number>;
  live_no_contact: Generated<number>;
  live_skipped_budget: Generated<number>;
  db_charged_tenths: ColumnType<string, number | bigint | undefined, number | bigint>;
  live_charged_tenths: ColumnType<string, number | bigint | undefined, number | bigint>;
  credits_final: Generated<boolean>;
  result_row_count: Generated<number>;
  result_entry_id: number | null;
  ended_early: Generated<boolean>;
  error: string | null;
  lease_token: string | null;
  heartbeat_at: NullableTimestamp;
  created_at: CreatedAt;
  started_at: NullableTimestamp;
  completed_at: NullableTimestamp;
  updated_at: Timestamp;
}

/** One row of a run's result file (null `status`: not processed yet). */
export interface EnrichmentUrlsTable {
  run_id: number;
  position: number;
  submitted_url: string;
  host: string | null;
  status: string | null;
  lead_id: number | null;
  credits_tenths: Generated<number>;
  contacts: JSONColumnType<Record<string, unknown>, string | null, string | null> | null;
}

/** The account setting `emailResults` defaults to. */
export interface EnrichmentSettingsTable {
  account_id: number;
  email_results: Generated<boolean>;
}

export interface EnrichmentTables {
  enrichment_runs: EnrichmentRunsTable;
  enrichment_urls: EnrichmentUrlsTable;
  enrichment_settings: EnrichmentSettingsTable;
}
