import { sql, type RawBuilder } from "kysely";
import { leadFieldSql } from "./field-sql.js";
import { LEAD_FIELDS, type LeadField } from "./fields.js";

/** A field's value in the API's Lead: leadFieldSql, with an unknown list `[]` and object `{}`. */
function apiValueSql(field: LeadField, alias: string): RawBuilder<unknown> {
  const value = leadFieldSql(field, alias);
  if (field.type === "list" && !field.nullable) return sql`coalesce(${value}, '{}')`;
  if (field.type === "object") return sql`coalesce(${value}, '{}'::jsonb)`;
  return value;
}

/**
 * The API's Lead of the `leads` row `alias` as JSON text, built by PostgreSQL: the same fields,
 * values and order as toLead (presenter.ts) writes from the LeadRecord of that row (both follow
 * the field catalogue), so a page of leads reaches the answer without a row object, a LeadRecord
 * or a Lead object per lead (docs/search.md "Leads as JSON from PostgreSQL").
 * test/leads-presenter-sql.test.ts compares the two on every kind of value.
 */
export function leadJsonSql(alias: string): RawBuilder<string> {
  // row_to_json writes the columns in order, without spaces (json_build_object adds some).
  const columns = sql.join(
    LEAD_FIELDS.map((field) => sql`${apiValueSql(field, alias)} as ${sql.id(field.name)}`),
  );
  return sql<string>`(select row_to_json(lead_json)::text from (select ${columns}) lead_json)`;
}
