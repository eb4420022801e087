import type { ColumnType, Generated } from "kysely";
import type { NullableTimestamp, Timestamp } from "./accounts.js";

type Json<T> = ColumnType<T, string, string>;

export type JobStatusColumn = "running" | "completed" | "failed" | "expired";

export interface JobsTable {
  id: string;
  account_id: number;
  kind: string;
  endpoint: string;
  request_hash: string;
  idempotency_key: string | null;
  key_expires_at: NullableTimestamp;
  input: Json<unknown>;
  status: Generated<JobStatusColumn>;
  phase: Generated<string>;
  progress_done: Generated<number>;
  progress_total: Generated<number>;
  progress_label: Generated<string>;
  answer: ColumnType<unknown, string | null | undefined, string | null>;
  attempts: Generated<number>;
  worker_id: string | null;
  heartbeat_at: NullableTimestamp;
  created_at: ColumnType<Date, Date | string | undefined, Date | string>;
  deadline_at: Timestamp;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
  result_expires_at: NullableTimestamp;
  expired_at: NullableTimestamp;
}

/** Tables of background jobs (src/jobs). */
export interface JobTables {
  jobs: JobsTable;
}
