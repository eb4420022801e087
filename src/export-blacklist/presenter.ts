import type { JsonBody } from "../http/contract.js";
import type { BlacklistEntry } from "./repository.js";
import type { AddResult } from "./service.js";

export type BlacklistEntryBody = JsonBody<"listExportBlacklist", 200>["data"][number];

/** The API's shape of a blacklist entry. */
export function toBlacklistEntryBody(entry: BlacklistEntry): BlacklistEntryBody {
  return {
    id: entry.id,
    entryType: entry.entryType,
    value: entry.value,
    createdAt: entry.createdAt.toISOString(),
  };
}

/** The API's shape of the result of adding entries. */
export function toAddResultBody(result: AddResult): JsonBody<"addExportBlacklistEntries", 201>["data"] {
  return { added: result.added.map(toBlacklistEntryBody), skipped: result.skipped };
}
