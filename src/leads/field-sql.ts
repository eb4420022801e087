import { sql, type RawBuilder } from "kysely";
import type { LeadField } from "./fields.js";

/** `YYYY-MM-DDTHH:MM:SS.sssZ` of a timestamptz, as `Date.toISOString` writes it. */
const isoTimestamp = (value: RawBuilder<unknown>) =>
  sql`to_char(${value} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The SQL of a field's value as the API's Lead has it (toLead, src/leads/presenter.ts), from a row
 * of `leads` or `lead_versions` aliased `alias`: derived fields computed from the catalogue's
 * derivation (`website` the first URL set, `phoneTotal` the phones set, `databaseType` its
 * constant), date-times as `Date.toISOString` writes them, dates `YYYY-MM-DD`. Lists and objects
 * are as stored: null stays null (the API's empty value is the caller's choice: leadJsonSql fills
 * it, an export cell leaves it empty).
 */
export function leadFieldSql(field: LeadField, alias: string): RawBuilder<unknown> {
  const col = (column: string) => sql.ref(`${alias}.${column}`);
  const derived = field.derived;
  // Literals only, no parameters: COPY statements use this too (src/lead-export-history/file-rows.ts).
  if (derived?.kind === "constant") return sql`${sql.lit(derived.value)}::text`;
  if (derived?.kind === "firstOf") return sql`coalesce(${sql.join(derived.columns.map(col))})`;
  if (derived?.kind === "countSet") {
    return sql`(${sql.join(
      derived.columns.map((c) => sql`(coalesce(${col(c)}, '') <> '')::int`),
      sql` + `,
    )})`;
  }
  if (field.column === null) throw new Error(`no SQL for the lead field ${field.name}`);
  const value = col(field.column);
  if (field.type === "timestamp") return isoTimestamp(value);
  if (field.type === "date") return sql`to_char(${value}, 'YYYY-MM-DD')`;
  return value;
}
