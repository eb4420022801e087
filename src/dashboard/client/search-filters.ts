import type { components } from "../../../generated/api.js";
import { el } from "./dom.js";

type PresetFilters = components["schemas"]["FilterPresetFilters"];

/**
 * The search parameters the form edits: the members of `LeadSearchFilters` a sales team uses most
 * (keywords with `*` wildcards, states, cities, the last buying signal's dates, rating, sort).
 */
// A type, not an interface: it is assignable to a preset's open `filters` object.
export type FormFilters = {
  positiveKeywords?: string[];
  negativeKeywords?: string[];
  stateInclude?: string[];
  cityInclude?: string[];
  lastBuyingSignalFrom?: string;
  lastBuyingSignalTo?: string;
  minStars?: number;
  sortBy?: string;
  sortOrder?: "asc" | "desc";
};

/** The members of a preset the form shows; a preset's other members are named, not applied. */
const FORM_MEMBERS = new Set<string>([
  "positiveKeywords",
  "negativeKeywords",
  "stateInclude",
  "cityInclude",
  "lastBuyingSignalFrom",
  "lastBuyingSignalTo",
  "minStars",
  "sortBy",
  "sortOrder",
  "page",
  "limit",
  // Always the Main database (`other`): nothing to show.
  "database",
]);

/** The default `orColumns` (the four searched columns), in either spelling: nothing to show. */
const DEFAULT_OR_COLUMNS = [
  ["registeredUrl", "crawledUrl", "companyName", "aiCategoryEstimation"],
  ["wOgrequestedUrl", "wSimpleCrawledUrl", "wCompanyName", "aiCategoryEstimation"],
].map((columns) => [...columns].sort().join(","));

/** Sort choices of the form (`sortBy` values of the contract). */
const SORTS: [string, string][] = [
  ["lastBuyingSignal", "Last buying signal"],
  ["wCompanyName", "Company name"],
  ["wAddressCity", "City"],
  ["wReviewCount", "Number of reviews"],
];

/** A comma-separated field's items, trimmed, empty ones dropped. */
export function splitList(text: string): string[] {
  return text
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

/** A list member of a preset: an array, a JSON array string or a comma-separated string. */
function listOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  if (typeof value !== "string") return [];
  const text = value.trim();
  if (text.startsWith("[")) {
    try {
      const parsed: unknown = JSON.parse(text);
      return listOf(Array.isArray(parsed) ? parsed : []);
    } catch {
      return [];
    }
  }
  return splitList(text);
}

const DATE = /^\d{4}-\d{2}-\d{2}/;

/** The filter form: its fields, reading them, and filling them from a preset. */
export interface FilterForm {
  node: HTMLFormElement;
  read(): FormFilters;
  /** Fills the form from a preset's filters; returns the preset's members the form cannot show. */
  apply(filters: PresetFilters): string[];
  /** Adds keywords (a keyword list) to the positive or negative keywords. */
  addKeywords(type: "positive" | "negative", keywords: string[]): void;
  excludePurchased(): boolean;
  limit(): number;
  page(): number;
}

function field(id: string, label: string, input: HTMLElement, hint?: string): HTMLElement {
  const hintNode = hint ? el("small", { id: `${id}-hint`, class: "hint" }, hint) : null;
  if (hintNode) input.setAttribute("aria-describedby", `${id}-hint`);
  return el("div", { class: "field" }, el("label", { for: id }, label), input, hintNode);
}

/** Builds the filter form (no data needed: it is drawn before any call returns). */
export function filterForm(): FilterForm {
  const keywords = el("input", { id: "keywords", name: "positiveKeywords", autocomplete: "off" });
  const negative = el("input", { id: "negative-keywords", name: "negativeKeywords", autocomplete: "off" });
  const states = el("input", { id: "states", name: "stateInclude", autocomplete: "off", size: "10" });
  const cities = el("input", { id: "cities", name: "cityInclude", autocomplete: "off" });
  const from = el("input", { id: "signal-from", name: "lastBuyingSignalFrom", type: "date" });
  const to = el("input", { id: "signal-to", name: "lastBuyingSignalTo", type: "date" });
  const stars = el("select", { id: "min-stars", name: "minStars" });
  stars.append(
    el("option", { value: "" }, "Any"),
    ...["3", "3.5", "4", "4.5"].map((v) => el("option", { value: v }, `${v} or more`)),
  );
  const sortBy = el("select", { id: "sort-by", name: "sortBy" });
  sortBy.append(...SORTS.map(([value, text]) => el("option", { value }, text)));
  const sortOrder = el("select", { id: "sort-order", name: "sortOrder" });
  sortOrder.append(
    el("option", { value: "desc" }, "Newest / largest first"),
    el("option", { value: "asc" }, "Oldest / smallest first"),
  );
  const onlyNew = el("input", { id: "exclude-purchased", name: "excludePurchased", type: "checkbox" });
  const limit = el("select", { id: "page-size", name: "limit" });
  limit.append(...["10", "25", "50", "100"].map((v) => el("option", { value: v, selected: v === "25" }, v)));
  const page = el("input", { id: "page", name: "page", type: "number", min: "1", value: "1", size: "4" });

  const node = el(
    "form",
    { id: "search-form", class: "filters", "aria-label": "Lead search filters" },
    field("keywords", "Keywords", keywords, "Comma-separated; * is a wildcard, e.g. *dental*, *auto*repair*"),
    field("negative-keywords", "Exclude keywords", negative, "Leads matching any of these are left out"),
    field("states", "States", states, "Two-letter codes, e.g. TX, OK"),
    field("cities", "Cities", cities, "Comma-separated"),
    field("signal-from", "Last buying signal from", from),
    field("signal-to", "Last buying signal to", to),
    field("min-stars", "Rating", stars),
    field("sort-by", "Sort by", sortBy),
    field("sort-order", "Order", sortOrder),
    field("page-size", "Leads per page", limit),
    field("page", "Page", page),
    el(
      "div",
      { class: "field check" },
      onlyNew,
      el("label", { for: "exclude-purchased" }, "Only leads I have not received"),
    ),
    el("button", { type: "submit", id: "preview-button" }, "Preview (free)"),
  );

  return {
    node,
    read() {
      const filters: FormFilters = {};
      const set = <K extends keyof FormFilters>(key: K, value: FormFilters[K] | undefined) => {
        if (value !== undefined) filters[key] = value;
      };
      const list = (input: HTMLInputElement) => {
        const items = splitList(input.value);
        return items.length > 0 ? items : undefined;
      };
      set("positiveKeywords", list(keywords));
      set("negativeKeywords", list(negative));
      set(
        "stateInclude",
        list(states)?.map((s) => s.toUpperCase()),
      );
      set("cityInclude", list(cities));
      set("lastBuyingSignalFrom", from.value || undefined);
      // A date alone is the start of its day: the "to" date includes the whole day.
      set("lastBuyingSignalTo", to.value ? `${to.value}T23:59:59Z` : undefined);
      set("minStars", stars.value ? Number(stars.value) : undefined);
      set("sortBy", sortBy.value);
      set("sortOrder", sortOrder.value === "asc" ? "asc" : "desc");
      return filters;
    },
    apply(preset) {
      keywords.value = listOf(preset.positiveKeywords).join(", ");
      negative.value = listOf(preset.negativeKeywords).join(", ");
      states.value = listOf(preset.stateInclude).join(", ");
      cities.value = listOf(preset.cityInclude).join(", ");
      const orColumns = [...listOf(preset.orColumns)].sort().join(",");
      const skipped = Object.keys(preset).filter(
        (key) => !FORM_MEMBERS.has(key) && !(key === "orColumns" && DEFAULT_OR_COLUMNS.includes(orColumns)),
      );
      const date = (value: unknown, name: string): string => {
        if (value === undefined) return "";
        if (typeof value === "string" && DATE.test(value)) return value.slice(0, 10);
        skipped.push(name);
        return "";
      };
      from.value = date(preset.lastBuyingSignalFrom, "lastBuyingSignalFrom");
      to.value = date(preset.lastBuyingSignalTo, "lastBuyingSignalTo");
      stars.value = preset.minStars === undefined ? "" : String(preset.minStars);
      if (stars.value !== "" && stars.selectedIndex < 0) {
        stars.append(el("option", { value: String(preset.minStars) }, `${preset.minStars} or more`));
        stars.value = String(preset.minStars);
      }
      const sort = typeof preset.sortBy === "string" ? preset.sortBy : "lastBuyingSignal";
      if (!SORTS.some(([value]) => value === sort)) sortBy.append(el("option", { value: sort }, sort));
      sortBy.value = sort;
      sortOrder.value = preset.sortOrder === "asc" ? "asc" : "desc";
      page.value = String(preset.page ?? 1);
      const size = String(preset.limit ?? 25);
      if (![...limit.options].some((o) => o.value === size))
        limit.append(el("option", { value: size }, size));
      limit.value = size;
      return skipped;
    },
    addKeywords(type, words) {
      const input = type === "positive" ? keywords : negative;
      const merged = [...new Set([...splitList(input.value), ...words])];
      input.value = merged.join(", ");
    },
    excludePurchased: () => onlyNew.checked,
    limit: () => Number(limit.value),
    page: () => Math.max(1, Math.floor(Number(page.value)) || 1),
  };
}
