import { resolveLeadField } from "../../leads/fields.js";
import type { FileFormat } from "./format.js";

/** One column of a file: its header and the lead field it reads (null for a spacer). */
export interface Column {
  header: string;
  field: string | null;
}

/** A lead as the writers read it: the API's camelCase Lead shape (any object keyed by field names). */
export type ExportLead = Readonly<Record<string, unknown>>;

/**
 * The columns of a format, in order. Aliases (`wCompanyName`) resolve to the camelCase field; a
 * name that no longer resolves (never accepted on save) gives an empty column.
 */
export function columnsOf(format: FileFormat): Column[] {
  return format.fieldMappings.map((mapping) => ({
    header: mapping.exportName,
    field: mapping.type === "spacer" ? null : (resolveLeadField(mapping.sourceField)?.name ?? null),
  }));
}

/** The value of one column of a lead (undefined for a spacer or a missing field). */
export function valueOf(lead: ExportLead, column: Column): unknown {
  return column.field === null ? undefined : lead[column.field];
}
