import type { ColumnType, Generated } from "kysely";
import type { CreatedAt, NullableTimestamp, Timestamp } from "./accounts.js";

/** Nullable `numeric` columns: read as text (exact), written as numbers. */
type NullableNumeric = ColumnType<string | null, number | string | null, number | string | null>;

export interface AutoTopUpSettingsTable {
  account_id: number;
  enabled: Generated<boolean>;
  trigger_type: string | null;
  trigger_amount: NullableNumeric;
  trigger_tenths: ColumnType<string | null, number | string | null, number | string | null>;
  purchase_type: string | null;
  purchase_amount: NullableNumeric;
  cap_type: string | null;
  cap_amount: NullableNumeric;
  pending_id: string | null;
  pending_since: NullableTimestamp;
  next_attempt_at: NullableTimestamp;
  consecutive_failures: Generated<number>;
  disabled_reason: string | null;
  created_at: CreatedAt;
  updated_at: Generated<Date>;
}

export interface AutoTopUpPurchasesTable {
  id: Generated<string>;
  account_id: number;
  period_start: Timestamp;
  pending_id: string;
  credits: number;
  amount_cents: number;
  status: string;
  payment_intent_id: string | null;
  created_at: CreatedAt;
}

/** Tables of the auto top-up (migration 2026_11_27_0300_auto_top_up). */
export interface AutoTopUpTables {
  auto_top_up_settings: AutoTopUpSettingsTable;
  auto_top_up_purchases: AutoTopUpPurchasesTable;
}
