import type { OutputShape } from "../output-shapes.js";

// The answers auto-refine asks of the AI model (strict JSON schemas, checked again on arrival).

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The ids of the leads of a batch that belong to the target categories. */
export const RELEVANT_LEADS: OutputShape<{ relevantIds: number[] }> = {
  name: "relevant_leads",
  schema: {
    type: "object",
    properties: { relevantIds: { type: "array", items: { type: "integer" } } },
    required: ["relevantIds"],
    additionalProperties: false,
  },
  check(value) {
    if (!isObject(value) || !Array.isArray(value.relevantIds) || !value.relevantIds.every(Number.isInteger)) {
      return { ok: false, problem: "relevantIds must be an array of integers" };
    }
    return { ok: true, value: { relevantIds: value.relevantIds as number[] } };
  },
};

/** Keywords proposed, best first. */
export const KEYWORD_CHOICE: OutputShape<{ keywords: string[] }> = {
  name: "keyword_choice",
  schema: {
    type: "object",
    properties: { keywords: { type: "array", items: { type: "string" } } },
    required: ["keywords"],
    additionalProperties: false,
  },
  check(value) {
    if (
      !isObject(value) ||
      !Array.isArray(value.keywords) ||
      !value.keywords.every((k) => typeof k === "string")
    ) {
      return { ok: false, problem: "keywords must be an array of strings" };
    }
    return { ok: true, value: { keywords: value.keywords as string[] } };
  },
};
