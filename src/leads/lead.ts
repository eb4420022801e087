/**
 * A lead of the database as the service handles it (domain form: camelCase, date-times as Date,
 * plain dates as `YYYY-MM-DD`): `externalId` and one member per stored field of the catalogue
 * (`STORED_LEAD_FIELDS` of fields.ts, under its name; test/lead-fields.test.ts checks both ways).
 * Repositories build it from rows; presenters build the API shapes from it.
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
  registrationDate: string | null;
  redirect: boolean | null;
  timeScraped: Date | null;
  addressFull: string | null;
  addressSource: string | null;
  emailPrimaryProvider: string | null;
  websiteEmailProvider: string | null;
  websiteEmailSecurity: string[];
  founderEmails: string[];
  founderPhones: string[];
  latitude: number | null;
  longitude: number | null;
  areaServed: string | null;
  offers: string | null;
  brand: string | null;
  slogan: string | null;
  logoUrl: string | null;
  platform: string | null;
  bookingOpsCrmSoftware: string | null;
  reputationChatSoftware: string | null;
  marketingEmailSoftware: string | null;
  adPixels: string | null;
  paymentFinancingSoftware: string | null;
  openPositions: number | null;
  ratingValue: number | null;
  duns: string | null;
}
