import type { RankedCategory } from "./catalog.js";
import type { BusinessDescription, KeywordRequest, LeadToClassify } from "./inputs.js";

// The model's instructions and inputs. Inputs are sent as JSON, so a customer's text stays data
// and cannot pose as instructions; answers are checked against their schema (output-shapes.ts)
// and kept to the names of the lead database by the engine.

export const SUGGEST_SYSTEM = [
  "You help a B2B company choose which categories of US small businesses to target as sales leads.",
  "You get a JSON object: the company's own description (and text of its website, if read) and",
  "`candidates`, category names of the lead database.",
  "Answer with the 4 to 12 candidates whose businesses are most likely to buy the company's product",
  "or service, best first. Use only names from `candidates`, spelled exactly as given.",
].join(" ");

export function suggestPrompt(business: BusinessDescription, candidates: readonly string[]): string {
  return JSON.stringify({
    companyName: business.companyName,
    companyDescription: business.companyDescription,
    productService: business.productService,
    websiteText: business.websiteText,
    candidates,
  });
}

export const KEYWORDS_SYSTEM = [
  "You write search keywords for a database of US small businesses. A keyword matches a business",
  "when it occurs (ignoring case) in its website address, its company name or its category names.",
  "You get a JSON object: the target categories, target locations and the searching company's profile.",
  "Answer with one positive list per target category (name: the category; keywords: short words",
  "and stems that occur in such businesses' names and web addresses, for example `plumb` for",
  "plumbing; sourceCategories: that category) and one negative list (keywords that would match",
  "unrelated businesses; sourceCategories: every target category). At most 25 keywords per list.",
].join(" ");

export function keywordsPrompt(request: KeywordRequest): string {
  return JSON.stringify({
    targetCategories: request.targetCategories,
    targetLocations: request.targetLocations,
    profile: { companyName: request.companyName, companyWebsite: request.companyWebsite },
  });
}

export const CLASSIFY_SYSTEM = [
  "You classify US small businesses. You get a JSON array of businesses, each with an id, what",
  "describes it and `candidates`, category names of the lead database.",
  "For each business answer its id and the 1 to 3 candidates that describe it best, best first,",
  "spelled exactly as given; an empty list when none fits.",
].join(" ");

export function classifyPrompt(
  items: readonly { lead: LeadToClassify; candidates: readonly RankedCategory[] }[],
): string {
  return JSON.stringify(
    items.map(({ lead, candidates }) => ({
      id: lead.id,
      companyName: lead.companyName,
      category: lead.category,
      description: lead.description?.slice(0, 500) ?? null,
      candidates: candidates.map((c) => c.name),
    })),
  );
}
