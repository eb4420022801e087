import type { ColumnType, Generated, JSONColumnType } from "kysely";
import type { CreatedAt, NullableTimestamp, Timestamp } from "./accounts.js";

type NullableDate = ColumnType<string | null, string | Date | null | undefined, string | Date | null>;

/** The lead database (one table; `databaseType` is always `other`). */
export interface LeadsTable {
  id: Generated<number>;
  /** The id a data source gave the lead; an import with it upserts. */
  external_id: string | null;
  company_name: string | null;
  legal_name: string | null;
  registered_url: string | null;
  crawled_url: string | null;
  email: string | null;
  email_secondary: string | null;
  email_tier1: string | null;
  email_tier2: string | null;
  email_tier3: string | null;
  email_tier4: string | null;
  email_tier5: string | null;
  email_tier6: string | null;
  phone: string | null;
  phone_secondary: string | null;
  street: string | null;
  city: string | null;
  state: string | null;
  zip: string | null;
  country: string | null;
  category: string | null;
  description: string | null;
  long_description: string | null;
  ai_category_estimation: string[] | null;
  stars: number | null;
  review_count: number | null;
  website_schema_types: Generated<string[]>;
  last_buying_signal: NullableTimestamp;
  buying_signal_type: Generated<string[]>;
  last_updated: NullableTimestamp;
  employees: number | null;
  founded_date: NullableDate;
  number_of_locations: number | null;
  is_chain: boolean | null;
  price_range: string | null;
  naics_code: string | null;
  founders: Generated<string[]>;
  opening_hours: string | null;
  social_profiles: JSONColumnType<Record<string, string>, string | undefined, string>;
  web_technologies: Generated<string[]>;
  registration_date: NullableDate;
  redirect: boolean | null;
  time_scraped: NullableTimestamp;
  address_full: string | null;
  address_source: string | null;
  email_primary_mx: string | null;
  email_domain_mx: string | null;
  email_security: Generated<string[]>;
  founder_emails: Generated<string[]>;
  founder_phones: Generated<string[]>;
  latitude: number | null;
  longitude: number | null;
  area_served: string | null;
  offers: string | null;
  brand: string | null;
  slogan: string | null;
  logo_url: string | null;
  platform: string | null;
  booking_ops_crm_software: string | null;
  reputation_chat_software: string | null;
  marketing_email_software: string | null;
  ad_pixels: string | null;
  payment_financing_software: string | null;
  open_positions: number | null;
  rating_value: number | null;
  duns: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
  /** Counts changes of the lead's data (see migration 0800). */
  version: Generated<number>;
}

/** Versions of leads replaced by a change while some lead export history entry names them. */
export interface LeadVersionsTable extends Omit<LeadsTable, "id" | "version"> {
  id: number;
  version: number;
}

/** One row per (account, lead) the account has received: the sticky export rule. */
export interface LeadExportHistoryTable {
  id: Generated<number>;
  account_id: number;
  lead_id: number;
  database_type: Generated<string>;
  exported_at: Timestamp;
  export_method: string;
  lead_last_updated: NullableTimestamp;
  lead_snapshot: JSONColumnType<Record<string, unknown>, string | null, string | null> | null;
  /** The version of the lead delivered (its data: `leads` or `lead_versions`); null with a snapshot. */
  lead_version: number | null;
  last_changed_fields: string[] | null;
  created_at: CreatedAt;
}

export interface FilterPresetsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  filters: JSONColumnType<Record<string, unknown>, string, string>;
  created_at: CreatedAt;
}

export interface KeywordListsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  type: "positive" | "negative";
  keywords: string[];
  source_categories: string[] | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
  /** Keyword auto-refine (migration 2026_11_27_0400_auto_refine, docs/ai.md). */
  auto_refine_enabled: Generated<boolean>;
  refinement_status: "running" | "paused" | "completed" | "failed" | null;
  scores_per_round: ColumnType<StoredRefinementScore[], string | undefined, string>;
  paired_list_id: number | null;
  current_round: Generated<number>;
  max_rounds: Generated<number>;
  last_refined_at: Date | null;
}

/** One round's quality score of a refinement, as stored in `scores_per_round`. */
export interface StoredRefinementScore {
  round: number;
  score: number;
  reasoning: string;
}

export interface ExportBlacklistTable {
  id: Generated<number>;
  account_id: number;
  entry_type: "domain";
  value: string;
  created_at: CreatedAt;
}

/** Tables of the lead database and what accounts keep about leads. */
/** Existing leads an import batch changed, queued for live updates (one row per batch). */
export interface LeadLiveUpdatesTable {
  id: Generated<string>;
  lead_ids: number[];
  /** The leads' versions after the change, parallel to `lead_ids`. */
  versions: number[];
  created_at: CreatedAt;
}

export interface LeadTables {
  leads: LeadsTable;
  lead_versions: LeadVersionsTable;
  lead_live_updates: LeadLiveUpdatesTable;
  lead_export_history: LeadExportHistoryTable;
  filter_presets: FilterPresetsTable;
  keyword_lists: KeywordListsTable;
  export_blacklist: ExportBlacklistTable;
}
