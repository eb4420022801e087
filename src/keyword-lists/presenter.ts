import type { JsonBody } from "../http/contract.js";
import type { KeywordList } from "./repository.js";

export type KeywordListBody = JsonBody<"createKeywordList", 201>["data"];

/** The API's shape of a keyword list (with its auto-refine state). */
export function toKeywordListBody(list: KeywordList): KeywordListBody {
  return {
    id: list.id,
    name: list.name,
    type: list.type,
    keywords: list.keywords,
    sourceCategories: list.sourceCategories,
    createdAt: list.createdAt.toISOString(),
    autoRefineEnabled: list.refinement.autoRefineEnabled,
    refinementStatus: list.refinement.refinementStatus,
    scoresPerRound: list.refinement.scoresPerRound,
    pairedListId: list.refinement.pairedListId,
  };
}
