import type { JsonBody } from "../http/contract.js";
import type { KeywordList } from "./repository.js";

export type KeywordListBody = JsonBody<"createKeywordList", 201>["data"];

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
