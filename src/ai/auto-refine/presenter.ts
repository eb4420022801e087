import type { JsonBody } from "../../http/contract.js";
import type { RefinableList } from "./repository.js";
import type { AutoRefineChange } from "./service.js";

export type AutoRefineListBody = JsonBody<"getAutoRefineStatus", 200>["data"][number];

/** The API's shape of a list's auto-refine state. */
export function toAutoRefineListBody(list: RefinableList): AutoRefineListBody {
  return {
    listId: list.id,
    name: list.name,
    type: list.type,
    autoRefineEnabled: list.autoRefineEnabled,
    refinementStatus: list.refinementStatus,
    currentRound: list.currentRound,
    maxRounds: list.maxRounds,
    scoresPerRound: list.scoresPerRound,
    lastRefinedAt: list.lastRefinedAt?.toISOString() ?? null,
    pairedListId: list.pairedListId,
  };
}

/** The answer of `enable` and `disable`: the message, how many run, and the lists changed. */
export function toAutoRefineChangeBody(change: AutoRefineChange): JsonBody<"enableAutoRefine", 200> {
  return {
    data: {
      message: change.message,
      running: change.running,
      lists: change.lists.map(toAutoRefineListBody),
    },
  };
}
