import type { JsonResponse } from "../http/types.js";
import type { KeywordList } from "./repository.js";

export type KeywordListBody = JsonResponse<"createKeywordList", 201>["data"];

/** The API's shape of a keyword list. */
export function toKeywordListBody(list: KeywordList): KeywordListBody {
  return {
    id: list.id,
    name: list.name,
    type: list.type,
    keywords: list.keywords,
    sourceCategories: list.sourceCategories,
    createdAt: list.createdAt.toISOString(),
  };
}
