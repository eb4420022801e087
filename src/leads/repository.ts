import type { Selectable } from "kysely";
import type { DbOrTrx } from "../db/database.js";
import type { LeadsTable } from "../db/schema/leads.js";
import { member, compileShape } from "./compiled-shape.js";
import { STORED_LEAD_FIELDS, type StoredLeadField } from "./fields.js";
import type { LeadRecord } from "./lead.js";

type LeadRow = Selectable<LeadsTable>;

/** Every column a LeadRecord is built from: `id`, `external_id` and each stored field's column. */
export const LEAD_RECORD_COLUMNS: readonly (keyof LeadsTable)[] = [
  "id",
  "external_id",
  ...STORED_LEAD_FIELDS.flatMap((field) => (field.column === "id" ? [] : [field.column])),
];

/** The columns of a lead row that a LeadRecord is built from. */
export type LeadRecordRow = Omit<LeadRow, "created_at" | "updated_at" | "version">;

/** `YYYY-MM-DD` of a date column (node-postgres may give a local-midnight Date or a string). */
function plainDate(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) {
    const pad = (n: number) => String(n).padStart(2, "0");
    return `${value.getFullYear()}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`;
  }
  return String(value).slice(0, 10);
}

const toDate = (value: unknown): Date | null =>
  value === null || value === undefined ? null : value instanceof Date ? value : new Date(value as string);

const toNumber = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);

/** The JavaScript of a stored field's domain value, read from row `v` (see compileShape). */
function recordValueCode(field: StoredLeadField): string {
  const value = member("v", field.column);
  switch (field.type) {
    case "timestamp":
      return `toDate(${value})`;
    case "date":
      return `plainDate(${value})`;
    case "number":
      return `toNumber(${value})`;
    case "list":
      return field.nullable ? `${value} ?? null` : `${value} ?? []`;
    case "object":
      return `${value} ?? {}`;
    default:
      return `${value} ?? null`;
  }
}

/**
 * Builds the domain form of a lead from its row: one member per stored field of the catalogue,
 * compiled once (src/leads/compiled-shape.ts). A list column that is null reads as `[]` (but
 * `aiCategoryEstimation`), `social_profiles` as `{}`, numbers as numbers.
 */
export const leadRecordFromRow: (row: LeadRecordRow) => LeadRecord = compileShape(
  "leadRecordFromRow",
  [
    ["id", member("v", "id")],
    ["externalId", `${member("v", "external_id")} ?? null`],
    ...STORED_LEAD_FIELDS.filter((field) => field.name !== "id").map(
      (field) => [field.name, recordValueCode(field)] as const,
    ),
  ],
  { plainDate, toDate, toNumber },
);

/** The leads with these ids, in the order of `ids` (ids not in the database are left out). */
export async function findLeadsByIds(db: DbOrTrx, ids: readonly number[]): Promise<LeadRecord[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom("leads")
    .select(LEAD_RECORD_COLUMNS)
    .where("id", "in", [...ids])
    .execute();
  const byId = new Map(rows.map((row) => [row.id, leadRecordFromRow(row)]));
  return ids.flatMap((id) => {
    const lead = byId.get(id);
    return lead ? [lead] : [];
  });
}
