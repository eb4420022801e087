import type { ColumnType, Generated } from "kysely";
import type { CreatedAt, Timestamp } from "./accounts.js";

export interface BillingCustomersTable {
  account_id: number;
  customer_id: string;
  subscription_id: string | null;
  payment_method_id: string | null;
  cancel_at_period_end: Generated<boolean>;
  pending_plan: string | null;
  overage_budget_type: string | null;
  overage_budget_amount: number | null;
  overage_failures: Generated<number>;
  created_at: CreatedAt;
  updated_at: Generated<Date>;
}

export interface BillingCheckoutsTable {
  id: Generated<string>;
  email: string;
  plan: string;
  trial: boolean;
  account_id: number | null;
  session_id: string | null;
  checkout_url: string | null;
  confirm_token_hash: string | null;
  status: Generated<string>;
  expires_at: Timestamp;
  created_at: CreatedAt;
}

export interface BillingEventsTable {
  event_id: string;
  event_type: string;
  subscription_id: string | null;
  status: string;
  payload: ColumnType<unknown, string | null, string | null>;
  event_created_at: Timestamp;
  received_at: CreatedAt;
}

export interface BillingTrialsTable {
  email_key: string;
  account_id: number | null;
  created_at: CreatedAt;
}

export interface BillingPaymentsTable {
  id: Generated<string>;
  account_id: number;
  kind: string;
  idempotency_key: string | null;
  request_hash: string;
  payment_intent_id: string | null;
  amount_cents: number;
  credits: Generated<number>;
  status: string;
  answer: ColumnType<unknown, string | null | undefined, string | null>;
  created_at: CreatedAt;
}

export interface BillingGrantsTable {
  payment_intent_id: string;
  account_id: number;
  credits: number;
  created_at: CreatedAt;
}

export interface BillingOverageTable {
  account_id: number;
  collected_tenths: ColumnType<number, number | string | undefined, number | string>;
  written_off_tenths: ColumnType<number, number | string | undefined, number | string>;
  updated_at: Generated<Date>;
}

/** Tables of billing through the payment processor (migration 2026_11_24_1110_billing). */
export interface BillingTables {
  billing_customers: BillingCustomersTable;
  billing_checkouts: BillingCheckoutsTable;
  billing_events: BillingEventsTable;
  billing_trials: BillingTrialsTable;
  billing_payments: BillingPaymentsTable;
  billing_grants: BillingGrantsTable;
  billing_overage: BillingOverageTable;
}
