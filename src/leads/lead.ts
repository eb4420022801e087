/**
 * A lead of the database as the service handles it (domain form: camelCase, dates as Date, the
 * plain-date `foundedDate` as `YYYY-MM-DD`). Repositories build it from rows; presenters build the
 * API shapes from it.
 */
export interface LeadRecord {
  id: number;
  externalId: string | null;
  companyName: string | null;
  legalName: string | null;
  registeredUrl: string | null;
  crawledUrl: string | null;
  email: string | null;
  emailSecondary: string | null;
  emailTier1: string | null;
  emailTier2: string | null;
  emailTier3: string | null;
  emailTier4: string | null;
  emailTier5: string | null;
  emailTier6: string | null;
  phone: string | null;
  phoneSecondary: string | null;
  street: string | null;
  city: string | null;
  state: string | null;
  zip: string | null;
  country: string | null;
  category: string | null;
  description: string | null;
  longDescription: string | null;
  aiCategoryEstimation: string[] | null;
  stars: number | null;
  reviewCount: number | null;
  websiteSchemaTypes: string[];
  lastBuyingSignal: Date | null;
  buyingSignalType: string[];
  lastUpdated: Date | null;
  employees: number | null;
  foundedDate: string | null;
  numberOfLocations: number | null;
  isChain: boolean | null;
  priceRange: string | null;
  naicsCode: string | null;
  founders: string[];
  openingHours: string | null;
  socialProfiles: Record<string, string>;
  webTechnologies: string[];
}

/** The business's main website: the registered URL, or the crawled URL when it has none. */
export function leadWebsite(lead: Pick<LeadRecord, "registeredUrl" | "crawledUrl">): string | null {
  return lead.registeredUrl ?? lead.crawledUrl ?? null;
}

/** How many phone numbers the lead has (0-2). */
export function leadPhoneTotal(lead: Pick<LeadRecord, "phone" | "phoneSecondary">): number {
  return (lead.phone ? 1 : 0) + (lead.phoneSecondary ? 1 : 0);
}
