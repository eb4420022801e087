import type { Generated } from "kysely";
import type { CreatedAt, NullableTimestamp, Timestamp } from "./accounts.js";

export interface ApiKeyUsageTable {
  key_id: number;
  last_used_at: Timestamp;
}

export interface DashboardSignInLinksTable {
  id: Generated<string>;
  account_id: number;
  token_hash: string;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
  created_at: CreatedAt;
}

export interface DashboardSessionsTable {
  id: Generated<string>;
  account_id: number;
  token_hash: string;
  expires_at: Timestamp;
  revoked_at: NullableTimestamp;
  created_at: CreatedAt;
}

/** The dashboard's sign-in links and sessions, and the API keys' last use (migration 2026_11_27_0600). */
export interface DashboardTables {
  api_key_usage: ApiKeyUsageTable;
  dashboard_sign_in_links: DashboardSignInLinksTable;
  dashboard_sessions: DashboardSessionsTable;
}
