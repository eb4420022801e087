import type { LeadRecord } from "./lead.js";
import { toLead } from "./presenter.js";

/**
 * A lead as stored in lead export history (`leadSnapshot`): every field of the API's Lead under
 * its database-style name (`wCompanyName`, `wPhonePrimary`, `wEmailPrimary`, ... the aliases of
 * `fields.ts`), values as the API gives them (dates as ISO strings).
 */
export type LeadSnapshot = Record<string, unknown>;

/**
 * The stored snapshot of a lead: the API's Lead under the aliases of `fields.ts`, in its order.
 * Written out as one object literal (test/lead-snapshot.test.ts checks it against LEAD_FIELDS):
 * a refresh builds 5,000 of them, and a literal is built 3-5 times faster than the same object
 * filled key by key (docs/performance.md, 2026-11-24 "Refresh within 2x of an export").
 */
export function toLeadSnapshot(lead: LeadRecord): LeadSnapshot {
  const a = toLead(lead);
  return {
    wId: a.id,
    wCompanyName: a.companyName ?? null,
    wWebsite: a.website ?? null,
    wRegisteredUrl: a.registeredUrl ?? null,
    wCrawledUrl: a.crawledUrl ?? null,
    wEmailPrimary: a.email ?? null,
    wEmailSecondary: a.emailSecondary ?? null,
    wEmailTier1: a.emailTier1 ?? null,
    wEmailTier2: a.emailTier2 ?? null,
    wEmailTier3: a.emailTier3 ?? null,
    wEmailTier4: a.emailTier4 ?? null,
    wEmailTier5: a.emailTier5 ?? null,
    wEmailTier6: a.emailTier6 ?? null,
    wPhonePrimary: a.phone ?? null,
    wPhoneSecondary: a.phoneSecondary ?? null,
    wPhoneTotal: a.phoneTotal ?? null,
    wAddress: a.address ?? null,
    wStreet: a.street ?? null,
    wCity: a.city ?? null,
    wState: a.state ?? null,
    wZip: a.zip ?? null,
    wCountry: a.country ?? null,
    wCategory: a.category ?? null,
    wDescription: a.description ?? null,
    wLongDescription: a.longDescription ?? null,
    wAiCategoryEstimation: a.aiCategoryEstimation ?? null,
    wStars: a.stars ?? null,
    wReviewCount: a.reviewCount ?? null,
    wWebsiteSchemaTypes: a.websiteSchemaTypes ?? null,
    wLastBuyingSignal: a.lastBuyingSignal ?? null,
    wBuyingSignalType: a.buyingSignalType ?? null,
    wLastUpdated: a.lastUpdated ?? null,
    wEmployees: a.employees ?? null,
    wFoundedDate: a.foundedDate ?? null,
    wNumberOfLocations: a.numberOfLocations ?? null,
    wIsChain: a.isChain ?? null,
    wPriceRange: a.priceRange ?? null,
    wLegalName: a.legalName ?? null,
    wNaicsCode: a.naicsCode ?? null,
    wFounders: a.founders ?? null,
    wOpeningHours: a.openingHours ?? null,
    wSocialProfiles: a.socialProfiles ?? null,
    wWebTechnologies: a.webTechnologies ?? null,
    wDatabaseType: a.databaseType ?? null,
  };
}
