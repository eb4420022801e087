import type { ColumnType, Generated } from "kysely";
import type { BigIntColumn, CreatedAt, NullableTimestamp, Timestamp } from "./accounts.js";

/** A JSON column: read as parsed JSON, written as a JSON string. */
type Json<T> = ColumnType<T, string, string>;
type NullableJson<T> = ColumnType<T | null, string | null | undefined, string | null>;

/** Who made a change, as stored: the channel and the API key's id (null for the dashboard). */
export interface StoredChangeSource {
  channel: "dashboard" | "api" | "mcp";
  apiKeyId: number | null;
}

export interface IntegrationsTable {
  id: Generated<number>;
  account_id: number;
  provider: string;
  status: Generated<string>;
  display_name: string;
  target_url: string | null;
  signing_secret: string;
  api_key: string | null;
  api_key_destinations: Generated<string[]>;
  external_account_id: string | null;
  metadata: ColumnType<Record<string, unknown>, string | undefined, string>;
  deal_settings: NullableJson<Record<string, unknown>>;
  consecutive_failures: Generated<number>;
  last_failure_at: NullableTimestamp;
  last_success_at: NullableTimestamp;
  token_expires_at: NullableTimestamp;
  created_via: NullableJson<StoredChangeSource>;
  last_changed_via: NullableJson<StoredChangeSource>;
  last_changed_at: NullableTimestamp;
  revision: Generated<number>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface IntegrationSubscriptionsTable {
  id: Generated<number>;
  integration_id: number;
  account_id: number;
  event_type: string;
  target_url: string | null;
  is_active: Generated<boolean>;
  config: ColumnType<Record<string, unknown>, string | undefined, string>;
  created_at: CreatedAt;
}

export interface EventOutboxTable {
  id: Generated<BigIntColumn>;
  account_id: number;
  event_type: string;
  data: NullableJson<unknown>;
  lead_refs: NullableJson<unknown>;
  exclude_integration_id: number | null;
  occurred_at: Timestamp;
}

export interface IntegrationDeliveriesTable {
  id: Generated<number>;
  account_id: number;
  integration_id: number;
  subscription_id: number | null;
  event_id: string;
  event_type: string;
  occurred_at: Timestamp;
  target_url: string;
  data: Json<unknown>;
  automatic: boolean;
  status: Generated<string>;
  status_code: number | null;
  attempt_count: Generated<number>;
  latency_ms: number | null;
  error_message: string | null;
  response_body: string | null;
  next_attempt_at: NullableTimestamp;
  parked: Generated<boolean>;
  batch_summary: NullableJson<unknown>;
  created_at: CreatedAt;
  completed_at: NullableTimestamp;
}

export interface IntegrationChangeNoticesTable {
  id: Generated<BigIntColumn>;
  account_id: number;
  summary: string;
  created_at: CreatedAt;
  mailed_at: NullableTimestamp;
}

export interface CrmOauthStatesTable {
  state_hash: string;
  account_id: number;
  /** The key that asked for the link; null when a dashboard session did (`session_id`). */
  api_key_id: number | null;
  /** The dashboard session that asked for it (bigint, read as a number); null for a key. */
  session_id: number | null;
  provider: string;
  environment: string;
  code_verifier: string | null;
  expires_at: Timestamp;
  created_at: CreatedAt;
}

export interface CrmConnectionsTable {
  integration_id: number;
  /** Encrypted (src/integrations/crm/token-cipher.ts). */
  access_token: string;
  /** Encrypted. */
  refresh_token: string;
  api_base: string;
  field_mapping: ColumnType<Record<string, unknown>, string | undefined, string>;
  refreshed_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface CrmFieldListsTable {
  integration_id: number;
  list: string;
  fields: Json<unknown>;
  cached_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** Tables of integrations, events and deliveries. */
export interface IntegrationTables {
  integrations: IntegrationsTable;
  integration_subscriptions: IntegrationSubscriptionsTable;
  event_outbox: EventOutboxTable;
  integration_deliveries: IntegrationDeliveriesTable;
  integration_change_notices: IntegrationChangeNoticesTable;
  crm_oauth_states: CrmOauthStatesTable;
  crm_connections: CrmConnectionsTable;
  crm_field_lists: CrmFieldListsTable;
}
