import type { ColumnType } from "kysely";
import type { Timestamp } from "./accounts.js";

/** Leads left out of an export by its `maxLeads` cap, kept for the account's next export. */
export interface LeadReservoirTable {
  account_id: number;
  lead_id: number;
  added_at: ColumnType<Date, Date | string | undefined, Date | string>;
  expires_at: Timestamp;
}

/** The tables of the export job (src/exports/job). */
export interface ExportJobTables {
  lead_reservoir: LeadReservoirTable;
}
