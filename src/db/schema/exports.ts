import type { ColumnType, Generated, JSONColumnType } from "kysely";
import type { CreatedAt, NullableTimestamp, Timestamp } from "./accounts.js";

/** One column of an export format as stored (the API's FieldMapping). */
export interface StoredFieldMapping {
  sourceField: string;
  exportName: string;
  type: "field" | "spacer";
}

/** Saved export formats of an account. */
export interface ExportFormatsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  file_type: "csv" | "json" | "xlsx";
  start_row: number;
  field_mappings: JSONColumnType<StoredFieldMapping[], string, string>;
  is_default: Generated<boolean>;
  split_files: boolean;
  split_mode: "max_rows" | "equal_parts" | "parts_max_rows" | null;
  max_rows_per_file: number | null;
  number_of_parts: number | null;
  include_total: boolean;
  include_headers: boolean;
  database_type: Generated<string>;
  combined_assignee_column_name: string | null;
  combined_file_name_column_name: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** One exported file (a split export has one row per part and one for `_total`). */
export interface ExportHistoryTable {
  id: Generated<number>;
  account_id: number;
  /** Groups the files of one export. */
  export_id: string;
  file_name: string;
  file_type: "csv" | "json" | "xlsx";
  lead_count: number;
  file_size: number;
  format_name: string | null;
  database_type: Generated<string>;
  export_method: "dashboard" | "api" | "email_schedule";
  part_number: number | null;
  is_total: Generated<boolean>;
  /** Where the bytes are in the file storage. */
  storage_key: string;
  /** Set when the cleanup task removed the bytes (after expiry). */
  file_deleted_at: NullableTimestamp;
  /** The export's search parameters (searchFiltersToJson); null when not written from a search. */
  filters: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  expires_at: Timestamp;
}

/** Tables of export formats and exported files. */
export interface ExportTables {
  export_formats: ExportFormatsTable;
  export_history: ExportHistoryTable;
}
