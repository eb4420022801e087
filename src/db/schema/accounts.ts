import type { ColumnType, Generated, Selectable } from "kysely";

export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
export type NullableTimestamp = ColumnType<
  Date | null,
  Date | string | null | undefined,
  Date | string | null
>;
export type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
export type BigIntColumn = ColumnType<number, number | bigint | string, number | bigint | string>;

export interface AccountsTable {
  id: Generated<number>;
  email: string;
  first_name: string | null;
  last_name: string | null;
  company_name: string | null;
  company_website: string | null;
  smb_type: Generated<string>;
  plan: string | null;
  subscription_status: Generated<string>;
  trial_used: Generated<boolean>;
  free_leads_used: Generated<number>;
  onboarding_completed: Generated<boolean>;
  target_categories: Generated<string[]>;
  target_locations: Generated<string[]>;
  period_start: Timestamp;
  period_end: NullableTimestamp;
  database_switched_at: NullableTimestamp;
  /** Whether `credit.low_balance` was sent for the current fall below the threshold. */
  low_balance_notified: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface ApiKeysTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  key_prefix: string;
  key_hash: string;
  revoked_at: NullableTimestamp;
  created_at: CreatedAt;
}

export interface CreditLedgerTable {
  id: Generated<BigIntColumn>;
  account_id: number;
  bucket: "monthly" | "permanent" | "overage";
  kind: "grant" | "charge" | "expire";
  amount_tenths: BigIntColumn;
  reason: string;
  reference: string | null;
  created_at: CreatedAt;
}

export interface RateLimitsTable {
  key: string;
  points: number;
  expire: BigIntColumn | null;
}

export interface AppSettingsTable {
  key: string;
  value: string;
  created_at: CreatedAt;
}

/** Tables of accounts, keys, credits and limits, and deployment-wide settings. */
export interface AccountTables {
  app_settings: AppSettingsTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  credit_ledger: CreditLedgerTable;
  rate_limits: RateLimitsTable;
}

export type AccountRow = Selectable<AccountsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
