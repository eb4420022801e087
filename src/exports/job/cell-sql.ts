import { sql, type RawBuilder } from "kysely";
import type { LeadField } from "../../leads/fields.js";
import { LIST_SEPARATOR } from "../../export-files/cells.js";
import type { CellEncoding, Column } from "../../export-files/columns.js";

/**
 * The SQL of a field's value for a lead row aliased `l`, typed as the API's Lead has it (derived
 * fields computed as toLead computes them), before encoding.
 */
function typedValue(field: LeadField): RawBuilder<unknown> {
  switch (field.name) {
    case "website":
      return sql`coalesce(l.registered_url, l.crawled_url)`;
    case "phoneTotal":
      return sql`((coalesce(l.phone, '') <> '')::int + (coalesce(l.phone_secondary, '') <> '')::int)`;
    case "databaseType":
      return sql`'other'::text`;
  }
  if (!field.column) throw new Error(`no SQL for the derived field ${field.name}`);
  const column = sql.ref(`l.${field.column}`);
  switch (field.type) {
    // As Date.prototype.toISOString writes it (UTC, milliseconds, `Z`).
    case "timestamp":
      return sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
    case "date":
      return sql`to_char(${column}, 'YYYY-MM-DD')`;
    default:
      return column;
  }
}

/**
 * The SQL of one cell of an export row (see ExportRow): text for the `text` encoding (lists
 * joined with `; `, numbers and booleans as literals, objects as JSON text) or JSON text for
 * `json`; NULL for a spacer or a missing value. Read with `textRows`, so the value arrives as the
 * text PostgreSQL sends and is never parsed.
 */
export function cellSql(column: Column, encoding: CellEncoding): RawBuilder<string | null> {
  const field = column.field;
  if (!field) return sql`null::text`;
  const value = typedValue(field);
  if (field.type === "object") return sql`${value}::text`;
  if (encoding === "json") return sql`to_json(${value})::text`;
  if (field.type === "list") return sql`array_to_string(${value}, ${sql.lit(LIST_SEPARATOR)})`;
  return sql`${value}::text`;
}
