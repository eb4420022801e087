import { LIST_SEPARATOR } from "../../src/export-files/cells.js";
import type { CellEncoding, Column, ExportRow } from "../../src/export-files/columns.js";

// The export encoding of a lead written in JavaScript: the reference the service's SQL encoding
// (src/exports/job/cell-sql.ts) is checked against, and what the file benchmarks write.

/**
 * A lead value as plain text (the `text` cell encoding): lists joined with `; `, objects as JSON,
 * dates as ISO 8601.
 */
export function plainText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint")
    return String(value);
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((item) => plainText(item)).join(LIST_SEPARATOR);
  return JSON.stringify(value);
}

/**
 * The export row of a lead in the API's Lead shape (any object keyed by camelCase field names):
 * the same encoding the database produces for a stored lead.
 */
export function exportRowOf(
  lead: Readonly<Record<string, unknown>>,
  columns: readonly Column[],
  encoding: CellEncoding,
): ExportRow {
  return columns.map((column) => {
    const value = column.field ? lead[column.field.name] : undefined;
    if (value === null || value === undefined) return null;
    if (encoding === "text") return plainText(value);
    return JSON.stringify(value instanceof Date ? value.toISOString() : value);
  });
}
