// What the engine works from (src/ai/engine.ts), shared with the prompts and keyword rules.

/** What a business says about itself (the suggestion's inputs, website text included). */
export interface BusinessDescription {
  companyName: string;
  companyDescription: string;
  productService: string;
  /** Text of the website's home page, when it was read. */
  websiteText: string | null;
}

/** What keyword generation starts from. */
export interface KeywordRequest {
  targetCategories: string[];
  targetLocations: string[];
  companyName: string | null;
  companyWebsite: string | null;
}

/** A lead to classify: its id and what describes it. */
export interface LeadToClassify {
  id: number;
  companyName: string | null;
  category: string | null;
  description: string | null;
}
