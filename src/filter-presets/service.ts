import type { DbOrTrx } from "../db/database.js";
import { errors } from "../http/errors.js";
import { parseSearchFilters, searchFiltersToJson } from "../leads/search/filters.js";
import { deletePreset, insertPreset, listPresets, type FilterPreset } from "./repository.js";

/** A preset as sent (schema-checked). */
export interface FilterPresetInput {
  name: string;
  filters: unknown;
}

/** The account's presets, newest first. */
export function listFilterPresets(db: DbOrTrx, accountId: number): Promise<FilterPreset[]> {
  return listPresets(db, accountId);
}

/**
 * Saves a preset: `filters` is checked exactly like the body of a search (400 `validation_error`
 * with `details` under `body.filters` for a wrong type or value, or no positive filter) and stored
 * in its normalised form, so members outside the search parameters are dropped.
 */
export function createFilterPreset(
  db: DbOrTrx,
  accountId: number,
  input: FilterPresetInput,
): Promise<FilterPreset> {
  const name = input.name.trim();
  if (name.length === 0) {
    throw errors.validation("The preset name must not be blank.", [
      { path: ["body", "name"], message: "must not be blank" },
    ]);
  }
  const filters = parseSearchFilters(input.filters, "body", { path: ["body", "filters"] });
  return insertPreset(db, accountId, name, searchFiltersToJson(filters));
}

/** Deletes one of the account's presets; 404 when it has no such preset. */
export async function deleteFilterPreset(db: DbOrTrx, accountId: number, id: number): Promise<void> {
  if (!(await deletePreset(db, accountId, id))) throw errors.notFound("Filter preset not found.");
}
