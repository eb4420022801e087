import { readFileSync } from "node:fs";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { columnsOf } from "../src/export-files/columns.js";
import { defaultFileFormat, type FileFormat } from "../src/export-files/format.js";
import { findExportRows } from "../src/exports/job/repository.js";
import {
  LEAD_FIELDS,
  resolveLeadField,
  STORED_LEAD_FIELDS,
  type LeadFieldType,
} from "../src/leads/fields.js";
import { importLeadRecords } from "../src/leads/import/importer.js";
import { IMPORT_COLUMNS, type LeadImportRecord, type LeadImportRow } from "../src/leads/import/record.js";
import type { LeadRecord } from "../src/leads/lead.js";
import { toLead, toMaskedLead } from "../src/leads/presenter.js";
import { findLeadsByIds } from "../src/leads/repository.js";
import { toLeadSnapshot } from "../src/leads/snapshot.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { uniqueWord } from "./helpers/leads-factories.js";

// The field catalogue (src/leads/fields.ts) declares each lead field once; the types that stay
// written out (LeadRecord, the import's record and row) and the contract's Lead must follow it,
// so a field cannot be half-added. Then one lead with every new field goes the whole way:
// import -> database -> search JSON, preview, snapshot, export cells.

const t = useTestApp();

/** A LeadRecord with every member: the compiler refuses a missing or unknown one. */
const RECORD: LeadRecord = {
  id: 1,
  externalId: null,
  companyName: null,
  legalName: null,
  registeredUrl: null,
  crawledUrl: null,
  email: null,
  emailSecondary: null,
  emailTier1: null,
  emailTier2: null,
  emailTier3: null,
  emailTier4: null,
  emailTier5: null,
  emailTier6: null,
  emailPrimaryProvider: null,
  websiteEmailProvider: null,
  websiteEmailSecurity: [],
  phone: null,
  phoneSecondary: null,
  street: null,
  city: null,
  state: null,
  zip: null,
  country: null,
  addressFull: null,
  addressSource: null,
  latitude: null,
  longitude: null,
  category: null,
  aiCategoryEstimation: null,
  description: null,
  longDescription: null,
  stars: null,
  ratingValue: null,
  reviewCount: null,
  websiteSchemaTypes: [],
  lastBuyingSignal: null,
  buyingSignalType: [],
  lastUpdated: null,
  registrationDate: null,
  redirect: null,
  timeScraped: null,
  employees: null,
  openPositions: null,
  foundedDate: null,
  numberOfLocations: null,
  isChain: null,
  priceRange: null,
  naicsCode: null,
  duns: null,
  founders: [],
  founderEmails: [],
  founderPhones: [],
  openingHours: null,
  areaServed: null,
  offers: null,
  brand: null,
  slogan: null,
  logoUrl: null,
  socialProfiles: {},
  platform: null,
  bookingOpsCrmSoftware: null,
  reputationChatSoftware: null,
  marketingEmailSoftware: null,
  adPixels: null,
  paymentFinancingSoftware: null,
  webTechnologies: [],
};

/** An import row with every column: the compiler refuses a missing or unknown one. */
const ROW: LeadImportRow = {
  external_id: null,
  company_name: null,
  legal_name: null,
  registered_url: null,
  crawled_url: null,
  email: null,
  email_secondary: null,
  email_tier1: null,
  email_tier2: null,
  email_tier3: null,
  email_tier4: null,
  email_tier5: null,
  email_tier6: null,
  email_primary_mx: null,
  email_domain_mx: null,
  email_security: [],
  phone: null,
  phone_secondary: null,
  street: null,
  city: null,
  state: null,
  zip: null,
  country: null,
  address_full: null,
  address_source: null,
  latitude: null,
  longitude: null,
  category: null,
  ai_category_estimation: null,
  description: null,
  long_description: null,
  stars: null,
  rating_value: null,
  review_count: null,
  website_schema_types: [],
  last_buying_signal: null,
  buying_signal_type: [],
  last_updated: null,
  registration_date: null,
  redirect: null,
  time_scraped: null,
  employees: null,
  open_positions: null,
  founded_date: null,
  number_of_locations: null,
  is_chain: null,
  price_range: null,
  naics_code: null,
  duns: null,
  founders: [],
  founder_emails: [],
  founder_phones: [],
  opening_hours: null,
  area_served: null,
  offers: null,
  brand: null,
  slogan: null,
  logo_url: null,
  social_profiles: {},
  platform: null,
  booking_ops_crm_software: null,
  reputation_chat_software: null,
  marketing_email_software: null,
  ad_pixels: null,
  payment_financing_software: null,
  web_technologies: [],
};

/** Every key of an import record (all optional there): the compiler refuses a missing or unknown one. */
const RECORD_KEYS: Record<keyof LeadImportRecord, true> = {
  id: true,
  companyName: true,
  website: true,
  registeredUrl: true,
  crawledUrl: true,
  email: true,
  emailSecondary: true,
  emailTier1: true,
  emailTier2: true,
  emailTier3: true,
  emailTier4: true,
  emailTier5: true,
  emailTier6: true,
  emailPrimaryProvider: true,
  websiteEmailProvider: true,
  websiteEmailSecurity: true,
  phone: true,
  phoneSecondary: true,
  address: true,
  street: true,
  city: true,
  state: true,
  zip: true,
  country: true,
  addressFull: true,
  addressSource: true,
  latitude: true,
  longitude: true,
  category: true,
  aiCategoryEstimation: true,
  description: true,
  longDescription: true,
  stars: true,
  ratingValue: true,
  reviewCount: true,
  websiteSchemaTypes: true,
  lastBuyingSignal: true,
  buyingSignalType: true,
  lastUpdated: true,
  registrationDate: true,
  redirect: true,
  timeScraped: true,
  legalName: true,
  employees: true,
  openPositions: true,
  foundedDate: true,
  numberOfLocations: true,
  isChain: true,
  priceRange: true,
  naicsCode: true,
  duns: true,
  founders: true,
  founderEmails: true,
  founderPhones: true,
  openingHours: true,
  areaServed: true,
  offers: true,
  brand: true,
  slogan: true,
  logoUrl: true,
  socialProfiles: true,
  platform: true,
  bookingOpsCrmSoftware: true,
  reputationChatSoftware: true,
  marketingEmailSoftware: true,
  adPixels: true,
  paymentFinancingSoftware: true,
  webTechnologies: true,
};

const sorted = (names: Iterable<string>) => [...names].sort();

type Schema = Record<string, unknown> & { anyOf?: Schema[]; type?: string; format?: string };
const openapi = parse(readFileSync(new URL("../openapi.yaml", import.meta.url), "utf8")) as {
  components: { schemas: Record<string, { properties: Record<string, Schema>; required: string[] }> };
};

/** The JSON schema type (and format) a field of each catalogue type has in the contract. */
const SCHEMA_TYPES: Record<LeadFieldType, { type: string; format?: string }> = {
  integer: { type: "integer", format: "int32" },
  number: { type: "number", format: "double" },
  boolean: { type: "boolean" },
  text: { type: "string" },
  list: { type: "array" },
  timestamp: { type: "string", format: "date-time" },
  date: { type: "string", format: "date" },
  object: { type: "object" },
};

describe("the field catalogue and the types written out", () => {
  it("LeadRecord has externalId and one member per stored field, and nothing else", () => {
    expect(sorted(Object.keys(RECORD))).toEqual(
      sorted(["externalId", ...STORED_LEAD_FIELDS.map((f) => f.name)]),
    );
  });

  it("an import row has the external id and one column per imported field, and nothing else", () => {
    expect(sorted(Object.keys(ROW))).toEqual(sorted(IMPORT_COLUMNS));
    const imported = STORED_LEAD_FIELDS.filter((f) => f.parse !== null).map((f) => f.column);
    expect(sorted(IMPORT_COLUMNS)).toEqual(sorted(["external_id", ...imported]));
    // Every stored field but the lead's own id is imported.
    expect(STORED_LEAD_FIELDS.filter((f) => f.parse === null).map((f) => f.name)).toEqual(["id"]);
  });

  it("an import record names every stored field, website and address, and nothing else", () => {
    expect(sorted(Object.keys(RECORD_KEYS))).toEqual(
      sorted([...STORED_LEAD_FIELDS.map((f) => f.name), "website", "address"]),
    );
  });

  it("the contract's Lead has every field of the catalogue, in its order, typed and nullable as it says", () => {
    const lead = openapi.components.schemas.Lead!;
    expect(Object.keys(lead.properties)).toEqual(LEAD_FIELDS.map((f) => f.name));
    expect(lead.required).toEqual(LEAD_FIELDS.map((f) => f.name));
    for (const field of LEAD_FIELDS) {
      const schema = lead.properties[field.name]!;
      if (field.name === "databaseType") continue; // the shared DatabaseType union
      const types = schema.anyOf ?? [schema];
      const nullable = types.some((s) => s.type === "null");
      expect(nullable, `${field.name} nullable`).toBe(field.nullable);
      const value = types.find((s) => s.type !== "null")!;
      expect({ type: value.type, format: value.format }, field.name).toEqual({
        format: undefined,
        ...SCHEMA_TYPES[field.type],
      });
    }
  });

  it("every column of the catalogue exists in leads and lead_versions", async () => {
    const { rows } = await sql<{ table_name: string; column_name: string }>`
      select table_name, column_name from information_schema.columns
      where table_name in ('leads', 'lead_versions')`.execute(t.ctx.db);
    for (const table of ["leads", "lead_versions"]) {
      const columns = new Set(rows.filter((r) => r.table_name === table).map((r) => r.column_name));
      for (const field of LEAD_FIELDS)
        if (field.column) expect(columns.has(field.column), field.column).toBe(true);
    }
  });

  it("resolves every sourceField key of the real service's export formats", () => {
    // REFERENCE.md section 7, in its order; `lastUpdated` stays our own lastUpdated field.
    const keys: [string, string][] = [
      ["lastUpdated", "lastUpdated"],
      ["lastUpdatedReason", "buyingSignalType"],
      ["wOgrequestedUrl", "registeredUrl"],
      ["wProfileDate", "registrationDate"],
      ["wRedirectYn", "redirect"],
      ["wSimpleCrawledUrl", "crawledUrl"],
      ["wCompanyName", "companyName"],
      ["aiCategoryEstimation", "aiCategoryEstimation"],
      ["wPhonePrimary", "phone"],
      ["wPhoneTotal", "phoneTotal"],
      ["wEmailPrimary", "email"],
      ["wEmailPrimaryMx", "emailPrimaryProvider"],
      ["wEmailTier1", "emailTier1"],
      ["wEmailTier2", "emailTier2"],
      ["wEmailTier3", "emailTier3"],
      ["wEmailTier4", "emailTier4"],
      ["wEmailTier5", "emailTier5"],
      ["wEmailTier6", "emailTier6"],
      ["wEmailDomainMx", "websiteEmailProvider"],
      ["wEmailSecurity", "websiteEmailSecurity"],
      ["wProfileCategory", "category"],
      ["wProfileDescriptionShort", "description"],
      ["wProfileDescriptionLong", "longDescription"],
      ["wAddressFull", "addressFull"],
      ["wAddressStreet", "street"],
      ["wAddressCity", "city"],
      ["wAddressState", "state"],
      ["wAddressZip", "zip"],
      ["wAddressSource", "addressSource"],
      ["wPlatform", "platform"],
      ["wBookingOpsCrmSoftware", "bookingOpsCrmSoftware"],
      ["wReputationChatSoftware", "reputationChatSoftware"],
      ["wMarketingEmailSoftware", "marketingEmailSoftware"],
      ["wAdPixels", "adPixels"],
      ["wPaymentFinancingSoftware", "paymentFinancingSoftware"],
      ["wEmployeeCount", "employees"],
      ["wOpenPositions", "openPositions"],
      ["wFoundingDate", "foundedDate"],
      ["wNumLocations", "numberOfLocations"],
      ["wIsChain", "isChain"],
      ["wRatingValue", "ratingValue"],
      ["wReviewCount", "reviewCount"],
      ["wPriceRange", "priceRange"],
      ["wLegalName", "legalName"],
      ["wIndustryNaics", "naicsCode"],
      ["wDuns", "duns"],
      ["wFounder", "founders"],
      ["wFounderEmail", "founderEmails"],
      ["wFounderPhone", "founderPhones"],
      ["wGeoLat", "latitude"],
      ["wGeoLong", "longitude"],
      ["wOpeningHours", "openingHours"],
      ["wAreaServed", "areaServed"],
      ["wOffers", "offers"],
      ["wBrand", "brand"],
      ["wSlogan", "slogan"],
      ["wLogoUrl", "logoUrl"],
      ["wSocialProfiles", "socialProfiles"],
      ["wTimeScraped", "timeScraped"],
    ];
    expect(keys.filter(([key, name]) => resolveLeadField(key)?.name !== name)).toEqual([]);
  });
});

describe("the preview's masking", () => {
  it("masks founder e-mails and phones item by item", () => {
    const lead: LeadRecord = {
      ...RECORD,
      founders: ["Ann Lee", "Bo Park"],
      founderEmails: ["ann.lee@acme.com", "bo@acme.com"],
      founderPhones: ["(512) 555-0142", "+1 737 555 0199", "12"],
    };
    expect(toMaskedLead(lead)).toMatchObject({
      founders: ["Ann Lee", "Bo Park"],
      founderEmails: ["ann*@acme.com", "b*@acme.com"],
      founderPhones: ["(512) ***-**42", "(737) ***-**99", "***"],
    });
    // The lead itself is not changed.
    expect(toLead(lead).founderEmails).toEqual(["ann.lee@acme.com", "bo@acme.com"]);
  });
});

/** An import record with every new field set. */
function newFields(word: string): Record<string, unknown> {
  return {
    id: `${word}-1`,
    companyName: `${word} Plumbing`,
    registeredUrl: `https://${word}.example`,
    crawledUrl: `https://www.${word}.example/home`,
    description: "Pipes and drains.",
    registrationDate: "2019-02-03",
    redirect: true,
    timeScraped: "2026-10-30T14:30:00.250Z",
    addressFull: "1 Main St, Austin, TX 78701",
    addressSource: "schema_org",
    emailPrimaryProvider: "google.com",
    websiteEmailProvider: "outlook.com",
    websiteEmailSecurity: ["spf", "dmarc"],
    founders: ["Ann Lee"],
    founderEmails: ["ann.lee@acme.com"],
    founderPhones: ["(512) 555-0142"],
    latitude: 30.274665,
    longitude: -97.74035,
    areaServed: "Greater Austin Area",
    offers: "Free estimates",
    brand: "Acme",
    slogan: "=Done right",
    logoUrl: `https://${word}.example/logo.png`,
    platform: "WordPress",
    bookingOpsCrmSoftware: "Housecall Pro, Calendly",
    reputationChatSoftware: "Podium",
    marketingEmailSoftware: "Mailchimp",
    adPixels: "Meta Pixel, Google Ads",
    paymentFinancingSoftware: "Wisetack",
    openPositions: 0,
    ratingValue: 4.8,
    duns: "12-345-6789",
    buyingSignalType: ["new_website"],
    lastUpdated: "2026-10-31T00:00:00Z",
  };
}

/** What the API's Lead holds for newFields (stored forms: DUNS without dashes). */
const API_VALUES = {
  registrationDate: "2019-02-03",
  redirect: true,
  timeScraped: "2026-10-30T14:30:00.250Z",
  addressFull: "1 Main St, Austin, TX 78701",
  addressSource: "schema_org",
  emailPrimaryProvider: "google.com",
  websiteEmailProvider: "outlook.com",
  websiteEmailSecurity: ["spf", "dmarc"],
  founderEmails: ["ann.lee@acme.com"],
  founderPhones: ["(512) 555-0142"],
  latitude: 30.274665,
  longitude: -97.74035,
  areaServed: "Greater Austin Area",
  offers: "Free estimates",
  brand: "Acme",
  slogan: "=Done right",
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

async function importedLead(word: string): Promise<number> {
  const result = await importLeadRecords(t.ctx.db, [newFields(word)]);
  expect(result).toMatchObject({ imported: 1, rejected: 0 });
  const row = await t.ctx.db
    .selectFrom("leads")
    .select("id")
    .where("external_id", "=", `${word}-1`)
    .executeTakeFirstOrThrow();
  return row.id;
}

describe("a lead with every new field, from import to every answer", () => {
  it("is in GET /leads as imported, masked in the preview until received, and in its snapshot", async () => {
    const word = uniqueWord();
    const id = await importedLead(word);
    const { auth } = await buildAccount(t.ctx.db, { plan: "enterprise" });

    const preview = await t
      .request()
      .get("/api/v1/leads/preview")
      .query({ positiveKeywords: word })
      .set(auth)
      .expect(200);
    expect(preview.body.data.leads).toEqual([
      expect.objectContaining({
        ...API_VALUES,
        founderEmails: ["ann*@acme.com"],
        founderPhones: ["(512) ***-**42"],
      }),
    ]);

    const search = await t
      .request()
      .get("/api/v1/leads")
      .query({ positiveKeywords: word })
      .set(auth)
      .expect(200);
    expect(search.body.data.leads).toEqual([
      expect.objectContaining({ id, ...API_VALUES, logoUrl: `https://${word}.example/logo.png` }),
    ]);
    // Received now: the preview shows the contacts.
    const again = await t
      .request()
      .get("/api/v1/leads/preview")
      .query({ positiveKeywords: word })
      .set(auth)
      .expect(200);
    expect(again.body.data.leads[0]).toMatchObject({ founderEmails: ["ann.lee@acme.com"] });

    const history = await t.request().get("/api/v1/lead-export-history").set(auth).expect(200);
    const entry = (history.body.data as { leadId: number; leadSnapshot: Record<string, unknown> }[]).find(
      (e) => e.leadId === id,
    )!;
    expect(entry.leadSnapshot).toMatchObject({
      wProfileDate: "2019-02-03",
      wRedirectYn: true,
      wTimeScraped: "2026-10-30T14:30:00.250Z",
      wEmailSecurity: ["spf", "dmarc"],
      wFounderEmail: ["ann.lee@acme.com"],
      wGeoLat: 30.274665,
      wOpenPositions: 0,
      wRatingValue: 4.8,
      wDuns: "123456789",
    });
    const [lead] = await findLeadsByIds(t.ctx.db, [id]);
    expect(entry.leadSnapshot).toEqual(toLeadSnapshot(lead!));
  });

  it("is in an export's cells under the real service's sourceField keys, in the text and JSON encodings", async () => {
    const word = uniqueWord();
    const id = await importedLead(word);
    const { auth } = await buildAccount(t.ctx.db);
    const keys = [
      "wOgrequestedUrl",
      "wProfileDescriptionShort",
      "wGeoLat",
      "lastUpdatedReason",
      "lastUpdated",
      "wProfileDate",
      "wRedirectYn",
      "wTimeScraped",
      "wEmailSecurity",
      "wFounderEmail",
      "wOpenPositions",
      "wDuns",
      "wSlogan",
    ];
    // The format is saved through the API, so its rules accept the keys.
    const saved = await t
      .request()
      .post("/api/v1/export-formats")
      .set(auth)
      .send({
        name: "Real keys",
        fileType: "csv",
        fieldMappings: keys.map((key) => ({ sourceField: key, exportName: key, type: "field" })),
      })
      .expect(201);
    const format: FileFormat = { ...defaultFileFormat(), fieldMappings: saved.body.data.fieldMappings };
    const columns = columnsOf(format);
    const [text] = await findExportRows(t.ctx.db, [id], columns, "text");
    expect(text).toEqual([
      `https://${word}.example`,
      "Pipes and drains.",
      "30.274665",
      "new_website",
      "2026-10-31T00:00:00.000Z",
      "2019-02-03",
      "true",
      "2026-10-30T14:30:00.250Z",
      "spf; dmarc",
      "ann.lee@acme.com",
      "0",
      "123456789",
      "=Done right", // neutralised by the writers, not here
    ]);
    const [json] = await findExportRows(t.ctx.db, [id], columns, "json");
    expect(json!.map((cell) => (cell === null ? null : JSON.parse(cell)))).toEqual([
      `https://${word}.example`,
      "Pipes and drains.",
      30.274665,
      ["new_website"],
      "2026-10-31T00:00:00.000Z",
      "2019-02-03",
      true,
      "2026-10-30T14:30:00.250Z",
      ["spf", "dmarc"],
      ["ann.lee@acme.com"],
      0,
      "123456789",
      "=Done right",
    ]);
  });
});
