/**
 * The answers asked of the AI model: each a JSON schema (sent as `response_format`, strict mode:
 * every property required, no others) and the check of a parsed answer against it, since a
 * server may ignore the schema.
 */
export interface OutputShape<T> {
  name: string;
  schema: Record<string, unknown>;
  check(value: unknown): { ok: true; value: T } | { ok: false; problem: string };
}

const stringArray = { type: "array", items: { type: "string" } };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

/** Category names chosen from a list of candidates, best first. */
export interface CategoryChoice {
  categories: string[];
}

export const CATEGORY_CHOICE: OutputShape<CategoryChoice> = {
  name: "category_choice",
  schema: {
    type: "object",
    properties: { categories: stringArray },
    required: ["categories"],
    additionalProperties: false,
  },
  check(value) {
    if (!isObject(value) || !isStringArray(value.categories)) {
      return { ok: false, problem: "categories must be an array of strings" };
    }
    return { ok: true, value: { categories: value.categories } };
  },
};

/** Categories chosen for each lead of a batch. */
export interface LeadCategoryChoice {
  leads: { id: number; categories: string[] }[];
}

export const LEAD_CATEGORY_CHOICE: OutputShape<LeadCategoryChoice> = {
  name: "lead_categories",
  schema: {
    type: "object",
    properties: {
      leads: {
        type: "array",
        items: {
          type: "object",
          properties: { id: { type: "integer" }, categories: stringArray },
          required: ["id", "categories"],
          additionalProperties: false,
        },
      },
    },
    required: ["leads"],
    additionalProperties: false,
  },
  check(value) {
    if (!isObject(value) || !Array.isArray(value.leads))
      return { ok: false, problem: "leads must be an array" };
    const leads: LeadCategoryChoice["leads"] = [];
    for (const item of value.leads) {
      if (!isObject(item) || !Number.isInteger(item.id) || !isStringArray(item.categories)) {
        return { ok: false, problem: "each lead needs an integer id and an array of category strings" };
      }
      leads.push({ id: item.id as number, categories: item.categories });
    }
    return { ok: true, value: { leads } };
  },
};

/** Keyword lists as the model proposes them. */
export interface ProposedKeywordLists {
  lists: {
    name: string;
    type: "positive" | "negative";
    keywords: string[];
    sourceCategories: string[];
  }[];
}

export const KEYWORD_LISTS: OutputShape<ProposedKeywordLists> = {
  name: "keyword_lists",
  schema: {
    type: "object",
    properties: {
      lists: {
        type: "array",
        items: {
          type: "object",
          properties: {
            name: { type: "string" },
            type: { type: "string", enum: ["positive", "negative"] },
            keywords: stringArray,
            sourceCategories: stringArray,
          },
          required: ["name", "type", "keywords", "sourceCategories"],
          additionalProperties: false,
        },
      },
    },
    required: ["lists"],
    additionalProperties: false,
  },
  check(value) {
    if (!isObject(value) || !Array.isArray(value.lists))
      return { ok: false, problem: "lists must be an array" };
    const lists: ProposedKeywordLists["lists"] = [];
    for (const item of value.lists) {
      if (
        !isObject(item) ||
        typeof item.name !== "string" ||
        (item.type !== "positive" && item.type !== "negative") ||
        !isStringArray(item.keywords) ||
        !isStringArray(item.sourceCategories)
      ) {
        return {
          ok: false,
          problem: "each list needs a name, a type positive or negative, keywords and sourceCategories",
        };
      }
      lists.push({
        name: item.name,
        type: item.type,
        keywords: item.keywords,
        sourceCategories: item.sourceCategories,
      });
    }
    return { ok: true, value: { lists } };
  },
};
