import type { JsonBody } from "../http/contract.js";
import type { FilterPreset } from "./repository.js";

export type FilterPresetBody = JsonBody<"createFilterPreset", 201>["data"];

/** The API's shape of a filter preset. */
export function toFilterPresetBody(preset: FilterPreset): FilterPresetBody {
  return {
    id: preset.id,
    name: preset.name,
    // Stored in the canonical body form of the search parameters (see searchFiltersToJson).
    filters: preset.filters as FilterPresetBody["filters"],
    createdAt: preset.createdAt.toISOString(),
  };
}
