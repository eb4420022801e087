import type { DbOrTrx } from "../db/database.js";
import { ApiError, describeDetails, errors } from "../http/errors.js";
import { findListsByIds } from "../keyword-lists/service.js";
import { parseSearchFilters, searchFiltersToJson, type SearchFilters } from "../leads/search/filters.js";
import {
  asHashDetails,
  foreignLists,
  HASH_PATH,
  hashHasPositiveFilter,
  hashToFilters,
  noPositiveFilter,
  parseHash,
} from "./hash.js";
import { listFormsToArrays } from "./list-forms.js";
import { deletePreset, insertPreset, listPresets, type FilterPreset } from "./repository.js";

/** A preset as sent (schema-checked): `filters` is checked here. */
export interface FilterPresetInput {
  name: string;
  filters: Record<string, unknown>;
}

/** The account's presets, newest first. */
export function listFilterPresets(db: DbOrTrx, accountId: number): Promise<FilterPreset[]> {
  return listPresets(db, accountId);
}

/**
 * The search parameters of a hash (hash.ts): its keyword lists are read now. `strict` (creation):
 * a list id that is not the account's is 400; otherwise (a send) such ids are left out, as a
 * deleted list is. 400 `validation_error` at `body.filters.hash` for a malformed hash, no positive
 * filter, or search parameters that do not check.
 */
async function hashSearchFilters(
  db: DbOrTrx,
  accountId: number,
  hash: string,
  strict: boolean,
): Promise<SearchFilters> {
  const parsed = parseHash(hash);
  const lists = await findListsByIds(
    db,
    accountId,
    parsed.lists.map((ref) => ref.id),
  );
  if (strict) {
    const missing = parsed.lists.filter((ref) => !lists.some((list) => list.id === ref.id));
    if (missing.length > 0) foreignLists(missing);
  }
  const body = hashToFilters(parsed, lists);
  if (!hashHasPositiveFilter(body)) noPositiveFilter();
  try {
    return parseSearchFilters(body, "body", { path: HASH_PATH, requirePositive: false });
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== "validation_error" || !err.details) throw err;
    const details = asHashDetails(err.details);
    throw errors.validation(describeDetails(details, "Invalid filters.hash"), details);
  }
}

/**
 * Saves a preset. `filters` is either `{hash}` (alone), checked by translating it with the
 * account's keyword lists now and stored as sent, or the search parameters (lists also as
 * JSON-array strings or comma-separated strings, list-forms.ts), checked exactly like the body of
 * a search and stored in their canonical form (members outside the search parameters dropped).
 * 400 `validation_error` with `details` under `body.filters`.
 */
export async function createFilterPreset(
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
  const { filters } = input;
  if (filters.hash !== undefined) {
    const others = Object.keys(filters).filter((key) => key !== "hash");
    if (others.length > 0) {
      const details = others.map((key) => ({
        path: ["body", "filters", key],
        message: "must not be sent with hash",
      }));
      throw errors.validation(describeDetails(details, "Invalid filters"), details);
    }
    await hashSearchFilters(db, accountId, String(filters.hash), true);
    return insertPreset(db, accountId, name, { hash: filters.hash });
  }
  const parsed = parseSearchFilters(listFormsToArrays(filters), "body", { path: ["body", "filters"] });
  return insertPreset(db, accountId, name, searchFiltersToJson(parsed));
}

/**
 * The search a stored preset runs now (e-mail schedule sends): a hash preset is translated again
 * with the account's current keyword lists (deleted ones left out); undefined when the preset no
 * longer holds a usable search (for example, its only positive keyword list was deleted).
 */
export async function presetSearchFilters(
  db: DbOrTrx,
  accountId: number,
  stored: Record<string, unknown>,
): Promise<SearchFilters | undefined> {
  try {
    if (typeof stored.hash === "string") return await hashSearchFilters(db, accountId, stored.hash, false);
    return parseSearchFilters(listFormsToArrays(stored), "body");
  } catch (err) {
    if (err instanceof ApiError && err.status === 400) return undefined;
    throw err;
  }
}

/** Deletes one of the account's presets; 404 when it has no such preset. */
export async function deleteFilterPreset(db: DbOrTrx, accountId: number, id: number): Promise<void> {
  if (!(await deletePreset(db, accountId, id))) throw errors.notFound("Filter preset not found.");
}
