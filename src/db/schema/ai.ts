import type { ColumnType, Generated } from "kysely";
import type { CreatedAt, NullableTimestamp, Timestamp } from "./accounts.js";

/** A keyword list as a generation stored it (the API's KeywordList, dates as ISO strings). */
export interface StoredGeneratedList {
  id: number;
  name: string;
  type: "positive" | "negative";
  keywords: string[];
  sourceCategories: string[] | null;
  createdAt: string;
}

/** The catalogue of category names in the lead database (migration 2026_11_24_1130_ai). */
export interface AiCategoriesTable {
  name: string;
  lead_count: number;
  search: ColumnType<string, never, never>;
}

/** When the catalogue was last built (one row). */
export interface AiCategoryCatalogTable {
  id: Generated<boolean>;
  built_at: Timestamp;
}

export interface AiKeywordGenerationsTable {
  id: string;
  account_id: number;
  status: "pending" | "running" | "completed" | "failed";
  source_categories: string[];
  keyword_lists: ColumnType<StoredGeneratedList[], string | undefined, string>;
  error: string | null;
  created_at: CreatedAt;
  started_at: NullableTimestamp;
  completed_at: NullableTimestamp;
}

/** The background classification's cursor (one row). */
export interface AiClassificationStateTable {
  id: Generated<boolean>;
  last_lead_id: number;
}

/** Leads the classification could not give a category, and when it tried. */
export interface AiUnclassifiedLeadsTable {
  lead_id: number;
  attempted_at: Timestamp;
}

/** One keyword auto-refine run (a list and its pair; migration 2026_11_27_0400_auto_refine). */
export interface AiRefinementsTable {
  id: string;
  account_id: number;
  list_id: number;
  paired_list_id: number | null;
  status: "running" | "paused" | "completed" | "failed";
  error: string | null;
  created_at: CreatedAt;
  heartbeat_at: Generated<Date>;
  finished_at: NullableTimestamp;
}

/** Tables of the AI helpers. */
export interface AiTables {
  ai_refinements: AiRefinementsTable;
  ai_categories: AiCategoriesTable;
  ai_category_catalog: AiCategoryCatalogTable;
  ai_keyword_generations: AiKeywordGenerationsTable;
  ai_classification_state: AiClassificationStateTable;
  ai_unclassified_leads: AiUnclassifiedLeadsTable;
}
