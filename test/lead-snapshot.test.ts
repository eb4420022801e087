import { describe, expect, it } from "vitest";
import { LEAD_FIELDS } from "../src/leads/fields.js";
import type { LeadRecord } from "../src/leads/lead.js";
import { toLead } from "../src/leads/presenter.js";
import { toLeadSnapshot } from "../src/leads/snapshot.js";

const full: LeadRecord = {
  id: 7,
  externalId: "ext-7",
  companyName: "Lone Star Plumbing",
  legalName: "Lone Star Plumbing LLC",
  registeredUrl: null,
  crawledUrl: "https://lonestar.example",
  email: "info@lonestar.example",
  emailSecondary: "sales@lonestar.example",
  emailTier1: "t1@lonestar.example",
  emailTier2: "t2@lonestar.example",
  emailTier3: "t3@lonestar.example",
  emailTier4: "t4@lonestar.example",
  emailTier5: "t5@lonestar.example",
  emailTier6: "t6@lonestar.example",
  phone: "(512) 555-0142",
  phoneSecondary: "(512) 555-0100",
  street: "1200 Congress Ave",
  city: "Austin",
  state: "TX",
  zip: "78701",
  country: "US",
  category: "Plumbing",
  description: "Plumbing.",
  longDescription: "Plumbing and drains.",
  aiCategoryEstimation: ["Plumbers"],
  stars: 4.5,
  reviewCount: 12,
  websiteSchemaTypes: ["LocalBusiness"],
  lastBuyingSignal: new Date("2026-11-01T10:00:00.123Z"),
  buyingSignalType: ["Primary Phone"],
  lastUpdated: new Date("2026-11-02T10:00:00Z"),
  employees: 8,
  foundedDate: "2001-05-04",
  numberOfLocations: 2,
  isChain: false,
  priceRange: "$$",
  naicsCode: "238220",
  founders: ["Ann Lee"],
  openingHours: "Mo-Fr 08:00-17:00",
  socialProfiles: { facebook: "https://facebook.com/lonestar" },
  webTechnologies: ["WordPress"],
  registrationDate: "2019-02-03",
  redirect: true,
  timeScraped: new Date("2026-10-20T08:09:10.456Z"),
  addressFull: "1200 Congress Ave, Austin, TX 78701",
  addressSource: "schema_org",
  emailPrimaryProvider: "google.com",
  websiteEmailProvider: "outlook.com",
  websiteEmailSecurity: ["spf", "dmarc"],
  founderEmails: ["ann@lonestar.example"],
  founderPhones: ["(512) 555-0111"],
  latitude: 30.2747,
  longitude: -97.7404,
  areaServed: "Greater Austin Area",
  offers: "Free estimates",
  brand: "Lone Star",
  slogan: "Done right the first time",
  logoUrl: "https://lonestar.example/logo.png",
  platform: "WordPress",
  bookingOpsCrmSoftware: "Housecall Pro, Calendly",
  reputationChatSoftware: "Podium",
  marketingEmailSoftware: "Mailchimp",
  adPixels: "Meta Pixel, Google Ads",
  paymentFinancingSoftware: "Wisetack",
  openPositions: 0,
  ratingValue: 4.8,
  duns: "123456789",
};

const sparse: LeadRecord = {
  ...full,
  companyName: null,
  crawledUrl: null,
  phoneSecondary: null,
  aiCategoryEstimation: null,
  stars: null,
  lastBuyingSignal: null,
  lastUpdated: null,
  isChain: null,
  registrationDate: null,
  redirect: null,
  timeScraped: null,
  websiteEmailSecurity: [],
  founderEmails: [],
  latitude: null,
  openPositions: null,
  ratingValue: null,
  duns: null,
};

describe("toLeadSnapshot", () => {
  it.each([
    ["every value", full],
    ["missing values", sparse],
  ])("is the API's Lead under every alias of fields.ts, in their order (%s)", (_name, lead) => {
    const api = toLead(lead) as unknown as Record<string, unknown>;
    const snapshot = toLeadSnapshot(lead);
    expect(Object.keys(snapshot)).toEqual(LEAD_FIELDS.map((f) => f.alias));
    for (const field of LEAD_FIELDS) expect(snapshot[field.alias]).toEqual(api[field.name] ?? null);
  });

  it("holds the new fields under their database-style names", () => {
    expect(toLeadSnapshot(full)).toMatchObject({
      wProfileDate: "2019-02-03",
      wRedirectYn: true,
      wTimeScraped: "2026-10-20T08:09:10.456Z",
      wEmailPrimaryMx: "google.com",
      wEmailDomainMx: "outlook.com",
      wEmailSecurity: ["spf", "dmarc"],
      wFounderEmail: ["ann@lonestar.example"],
      wFounderPhone: ["(512) 555-0111"],
      wGeoLat: 30.2747,
      wGeoLong: -97.7404,
      wOpenPositions: 0,
      wRatingValue: 4.8,
      wDuns: "123456789",
      wAddress: "1200 Congress Ave",
      wWebsite: "https://lonestar.example",
      wPhoneTotal: 2,
      wDatabaseType: "other",
    });
  });
});
