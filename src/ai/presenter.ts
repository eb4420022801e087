import type { JsonBody } from "../http/contract.js";
import type { KeywordGeneration } from "./repository.js";

/** One generation as `GET /ai/keyword-status` answers it (in `jobs`, or the bare array of `shape=list`). */
export type KeywordGenerationBody = Extract<JsonBody<"getKeywordStatus", 200>["data"], unknown[]>[number];

/** The API's shape of a keyword generation (its lists as they were saved). */
export function toKeywordGenerationBody(generation: KeywordGeneration): KeywordGenerationBody {
  return {
    id: generation.id,
    status: generation.status,
    sourceCategories: generation.sourceCategories,
    keywordLists: generation.keywordLists.map((list) => ({
      id: list.id,
      name: list.name,
      type: list.type,
      keywords: list.keywords,
      sourceCategories: list.sourceCategories,
      createdAt: list.createdAt,
    })),
    error: generation.error,
    createdAt: generation.createdAt.toISOString(),
    completedAt: generation.completedAt?.toISOString() ?? null,
  };
}
