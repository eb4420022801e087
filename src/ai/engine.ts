import type { Db } from "../db/database.js";
import { builtInKeywordLists, cleanKeywordLists, type GeneratedList } from "./keywords.js";
import { ensureCatalog, rankCategories, rankCategoriesForTexts, type RankedCategory } from "./catalog.js";
import type { ChatModel } from "./chat-model.js";
import type { BusinessDescription, KeywordRequest, LeadToClassify } from "./inputs.js";
import { CATEGORY_CHOICE, KEYWORD_LISTS, LEAD_CATEGORY_CHOICE } from "./output-shapes.js";
import {
  CLASSIFY_SYSTEM,
  classifyPrompt,
  KEYWORDS_SYSTEM,
  keywordsPrompt,
  SUGGEST_SYSTEM,
  suggestPrompt,
} from "./prompts.js";

/** Suggestions answer 4 to 12 categories. */
export const MIN_SUGGESTIONS = 4;
export const MAX_SUGGESTIONS = 12;
/** Candidates a model chooses suggestions from. */
const SUGGESTION_CANDIDATES = 40;
/** A name fits a text well enough to be suggested on its own merit from this score. */
const SUGGESTION_MIN_SCORE = 0.3;
/** A lead gets 1 to 3 categories; the built-in back end gives one from this score. */
const MAX_LEAD_CATEGORIES = 3;
const LEAD_MIN_SCORE = 0.5;
/** Candidates per lead a model chooses from. */
const LEAD_CANDIDATES = 8;

/**
 * The AI helpers' one engine. The category names it works with are those of the lead database
 * (the catalogue, src/ai/catalog.ts), ranked against the inputs in PostgreSQL; with a chat model
 * configured, the model chooses among the best-ranked names and writes the keywords, and without
 * one the ranking itself answers (the built-in back end: no network). Both back ends give only
 * names customers can search for.
 */
export class AiEngine {
  constructor(
    private readonly db: Db,
    /** The configured chat model; null: the built-in back end. */
    readonly model: ChatModel | null,
  ) {}

  /** The back end's name, for logs and docs: the model's name or `built-in`. */
  get backEnd(): string {
    return this.model ? this.model.name : "built-in";
  }

  /**
   * 4 to 12 category names of the lead database for a business, best first, none of `exclude`
   * (fewer only when the catalogue holds fewer). @throws AiUnavailableError when the model fails
   */
  async suggestCategories(
    business: BusinessDescription,
    exclude: readonly string[],
    signal?: AbortSignal,
  ): Promise<string[]> {
    await ensureCatalog(this.db);
    const text = [
      business.companyName,
      business.productService,
      business.companyDescription,
      business.websiteText ?? "",
    ].join("\n");
    const ranked = await rankCategories(this.db, text, { exclude, limit: SUGGESTION_CANDIDATES });
    if (!this.model) return builtInSuggestions(ranked);
    const choice = await this.model.complete({
      system: SUGGEST_SYSTEM,
      user: suggestPrompt(
        business,
        ranked.map((c) => c.name),
      ),
      shape: CATEGORY_CHOICE,
      signal,
    });
    return fromCandidates(choice.categories, ranked, MAX_SUGGESTIONS, MIN_SUGGESTIONS);
  }

  /**
   * Positive keyword lists (one per target category, each holding the category's own name, so
   * it finds the leads classified in it) and a negative list. @throws AiUnavailableError
   */
  async generateKeywords(request: KeywordRequest, signal?: AbortSignal): Promise<GeneratedList[]> {
    await ensureCatalog(this.db);
    if (!this.model) return builtInKeywordLists(this.db, request);
    const proposed = await this.model.complete({
      system: KEYWORDS_SYSTEM,
      user: keywordsPrompt(request),
      shape: KEYWORD_LISTS,
      signal,
    });
    return cleanKeywordLists(proposed.lists, request.targetCategories);
  }

  /**
   * 1 to 3 category names for each lead that has any fitting one (leads without are absent).
   * @throws AiUnavailableError
   */
  async classifyLeads(
    leads: readonly LeadToClassify[],
    signal?: AbortSignal,
  ): Promise<Map<number, string[]>> {
    await ensureCatalog(this.db);
    const texts = leads.map((lead) => ({ id: lead.id, text: leadText(lead) }));
    const ranked = await rankCategoriesForTexts(this.db, texts, LEAD_CANDIDATES);
    const result = new Map<number, string[]>();
    if (!this.model) {
      for (const [id, candidates] of ranked) {
        const names = candidates.filter((c) => c.score >= LEAD_MIN_SCORE).map((c) => c.name);
        if (names.length > 0) result.set(id, names.slice(0, MAX_LEAD_CATEGORIES));
      }
      return result;
    }
    const withCandidates = leads.filter((lead) => ranked.has(lead.id));
    if (withCandidates.length === 0) return result;
    const choice = await this.model.complete({
      system: CLASSIFY_SYSTEM,
      user: classifyPrompt(withCandidates.map((lead) => ({ lead, candidates: ranked.get(lead.id)! }))),
      shape: LEAD_CATEGORY_CHOICE,
      signal,
    });
    for (const chosen of choice.leads) {
      const candidates = ranked.get(chosen.id);
      if (!candidates) continue;
      const names = fromCandidates(chosen.categories, candidates, MAX_LEAD_CATEGORIES, 0);
      if (names.length > 0) result.set(chosen.id, names);
    }
    return result;
  }
}

/** What describes a lead for classification. */
export function leadText(lead: LeadToClassify): string {
  return [lead.companyName, lead.category, lead.description].filter(Boolean).join("\n");
}

/** The well-fitting names (up to 12), topped up to 4 with the next best. */
function builtInSuggestions(ranked: readonly RankedCategory[]): string[] {
  const fitting = ranked.filter((c) => c.score >= SUGGESTION_MIN_SCORE).slice(0, MAX_SUGGESTIONS);
  const names = fitting.map((c) => c.name);
  for (const candidate of ranked) {
    if (names.length >= MIN_SUGGESTIONS) break;
    if (!names.includes(candidate.name)) names.push(candidate.name);
  }
  return names;
}

/**
 * The model's choice kept to the candidates (compared ignoring case, in the catalogue's spelling,
 * without repeats), at most `max`, topped up to `min` with the best-ranked candidates not chosen.
 */
export function fromCandidates(
  chosen: readonly string[],
  candidates: readonly RankedCategory[],
  max: number,
  min: number,
): string[] {
  const byKey = new Map(candidates.map((c) => [c.name.toLowerCase(), c.name]));
  const names: string[] = [];
  for (const name of chosen) {
    const known = byKey.get(name.trim().toLowerCase());
    if (known && !names.includes(known)) names.push(known);
    if (names.length >= max) break;
  }
  for (const candidate of candidates) {
    if (names.length >= min) break;
    if (!names.includes(candidate.name)) names.push(candidate.name);
  }
  return names;
}
