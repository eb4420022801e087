import { sql, type RawBuilder } from "kysely";
import { LIST_SEPARATOR } from "../../export-files/cells.js";
import type { CellEncoding, Column } from "../../export-files/columns.js";
import { leadFieldSql } from "../../leads/field-sql.js";

/**
 * The SQL of one cell of an export row (see ExportRow), for a lead row aliased `l`: the field's
 * value as the API's Lead has it (leadFieldSql, from the field catalogue), encoded as text for the
 * `text` encoding (lists joined with `; `, numbers and booleans as literals, objects as JSON text)
 * or as JSON text for `json`; NULL for a spacer or a missing value. Read with `textRows`, so the
 * value arrives as the text PostgreSQL sends and is never parsed.
 */
export function cellSql(column: Column, encoding: CellEncoding): RawBuilder<string | null> {
  const field = column.field;
  if (!field) return sql`null::text`;
  const value = leadFieldSql(field, "l");
  if (field.type === "object") return sql`${value}::text`;
  if (encoding === "json") return sql`to_json(${value})::text`;
  if (field.type === "list") return sql`array_to_string(${value}, ${sql.lit(LIST_SEPARATOR)})`;
  return sql`${value}::text`;
}
