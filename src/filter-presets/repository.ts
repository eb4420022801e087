import type { Selectable } from "kysely";
import type { DbOrTrx } from "../db/database.js";
import type { FilterPresetsTable } from "../db/schema/leads.js";

/** A filter preset as the service sees it (domain shape, not a row). */
export interface FilterPreset {
  id: number;
  accountId: number;
  name: string;
  /** The normalised search parameters in their JSON (body) form. */
  filters: Record<string, unknown>;
  createdAt: Date;
}

function toPreset(row: Selectable<FilterPresetsTable>): FilterPreset {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    filters: row.filters,
    createdAt: row.created_at,
  };
}

/** The account's presets, newest first. */
export async function listPresets(db: DbOrTrx, accountId: number): Promise<FilterPreset[]> {
  const rows = await db
    .selectFrom("filter_presets")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .execute();
  return rows.map(toPreset);
}

/** Stores a new preset of the account. */
export async function insertPreset(
  db: DbOrTrx,
  accountId: number,
  name: string,
  filters: Record<string, unknown>,
): Promise<FilterPreset> {
  const row = await db
    .insertInto("filter_presets")
    .values({ account_id: accountId, name, filters: JSON.stringify(filters) })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toPreset(row);
}

/** Deletes one of the account's presets; false when the account has no such preset. */
export async function deletePreset(db: DbOrTrx, accountId: number, id: number): Promise<boolean> {
  const result = await db
    .deleteFrom("filter_presets")
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
