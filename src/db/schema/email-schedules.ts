import type { ColumnType, Generated, JSONColumnType } from "kysely";
import type { CreatedAt, NullableTimestamp, Timestamp } from "./accounts.js";

/** One recipient as stored (the API's ScheduleRecipient). */
export interface StoredRecipient {
  email: string;
  splitParts: number | null;
}

/** A text[] column. */
type TextArray = ColumnType<string[], string[] | undefined, string[]>;

/** E-mail schedules of an account (src/email-schedules/; migrations 0001 and 1100). */
export interface EmailSchedulesTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  database_type: Generated<string>;
  is_active: Generated<boolean>;
  pause_reason: string | null;
  filter_preset_id: number | null;
  export_format_id: number | null;
  interval_value: Generated<number>;
  interval_unit: Generated<string>;
  recipients: JSONColumnType<StoredRecipient[], string | undefined, string>;
  distribution_mode: Generated<string>;
  full_copy_recipients: TextArray;
  max_leads_per_email: number | null;
  combined_file_enabled: Generated<boolean>;
  combined_recipients: TextArray;
  combined_columns_position: Generated<string>;
  last_sent_at: NullableTimestamp;
  total_sent_count: Generated<number>;
  next_run_at: NullableTimestamp;
  watermark_lead_id: number | null;
  run_claimed_at: NullableTimestamp;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** Leads a schedule's run selected but did not send; the next run sends them first, by `position`. */
export interface EmailScheduleReservoirTable {
  schedule_id: number;
  lead_id: number;
  position: number;
}

export interface EmailScheduleTables {
  email_schedules: EmailSchedulesTable;
  email_schedule_reservoir: EmailScheduleReservoirTable;
}
