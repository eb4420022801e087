import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { LEADS_IMPORTED_CHANNEL } from "../src/leads/import/announce.js";
import { importLeadFile, importLeadRecords } from "../src/leads/import/importer.js";
import { validateLeadRecord } from "../src/leads/import/record.js";
import { createTestDatabase, type TestDatabase } from "./helpers/db.js";
import { ndjson, runAdminCli, tempFolder } from "./helpers/leads-import-factories.js";

let database: TestDatabase;
const files = tempFolder();

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.destroy();
  files.remove();
});
beforeEach(async () => {
  await sql`truncate leads restart identity cascade`.execute(database.db);
});

/** A lead with every field the import reads. */
const FULL = {
  id: "ext-1",
  companyName: "Lone Star Plumbing",
  website: "https://ignored-when-registered-url-is-set.example",
  registeredUrl: "https://www.lonestarplumbing.com",
  crawledUrl: "https://lonestarplumbing.com/home",
  email: "info@lonestarplumbing.com",
  emailSecondary: "office@lonestarplumbing.com",
  emailTier1: "t1@lonestarplumbing.com",
  emailTier2: "t2@lonestarplumbing.com",
  emailTier3: "t3@lonestarplumbing.com",
  emailTier4: "t4@lonestarplumbing.com",
  emailTier5: "t5@lonestarplumbing.com",
  emailTier6: "t6@lonestarplumbing.com",
  phone: "(512) 555-0142",
  phoneSecondary: "(512) 555-0199",
  address: "1200 Congress Ave, Suite 300",
  city: "Austin",
  state: "tx",
  zip: "78701",
  country: "US",
  category: "Plumber",
  description: "Family-owned plumbing in Austin.",
  longDescription: "Family-owned plumbing in Austin since 1998.",
  aiCategoryEstimation: ["Plumbing", "Home Services"],
  stars: 4.7,
  reviewCount: 312,
  websiteSchemaTypes: ["LocalBusiness", "Plumber"],
  lastBuyingSignal: "2026-03-01T12:30:00Z",
  buyingSignalType: ["new_website", "hiring"],
  lastUpdated: "2026-04-02T08:00:00+02:00",
  legalName: "Lone Star Plumbing LLC",
  employees: 12,
  foundedDate: "1998-05-04",
  numberOfLocations: 2,
  isChain: false,
  priceRange: "$$",
  naicsCode: "238220",
  founders: ["Ana Reyes", "Tom Reyes"],
  openingHours: "Mo-Fr 08:00-17:00",
  socialProfiles: { facebook: "https://www.facebook.com/lonestarplumbing" },
  webTechnologies: ["WordPress", "Google Analytics"],
  registrationDate: "2009-06-15",
  redirect: true,
  timeScraped: "2026-10-30 14:30:00",
  addressFull: "1200 Congress Ave, Suite 300, Austin, TX 78701",
  addressSource: "schema_org",
  emailPrimaryProvider: "Google.com",
  websiteEmailProvider: "outlook.com",
  websiteEmailSecurity: ["SPF", "dkim", "dmarc", "spf"],
  founderEmails: ["ana@lonestarplumbing.com", "tom@lonestarplumbing.com"],
  founderPhones: ["(512) 555-0111"],
  latitude: 30.274665,
  longitude: -97.74035,
  areaServed: "Greater Austin Area",
  offers: "Free estimates",
  brand: "Lone Star",
  slogan: "Done right the first time",
  logoUrl: "https://www.lonestarplumbing.com/logo.png",
  platform: "WordPress",
  bookingOpsCrmSoftware: "Housecall Pro, Calendly",
  reputationChatSoftware: "Podium",
  marketingEmailSoftware: "Mailchimp",
  adPixels: "Meta Pixel, Google Ads",
  paymentFinancingSoftware: "Wisetack",
  openPositions: 0,
  ratingValue: 4.8,
  duns: "12-345-6789",
};

/** The row FULL must become. */
const FULL_ROW = {
  external_id: "ext-1",
  company_name: "Lone Star Plumbing",
  registered_url: "https://www.lonestarplumbing.com",
  crawled_url: "https://lonestarplumbing.com/home",
  email: "info@lonestarplumbing.com",
  email_secondary: "office@lonestarplumbing.com",
  email_tier1: "t1@lonestarplumbing.com",
  email_tier2: "t2@lonestarplumbing.com",
  email_tier3: "t3@lonestarplumbing.com",
  email_tier4: "t4@lonestarplumbing.com",
  email_tier5: "t5@lonestarplumbing.com",
  email_tier6: "t6@lonestarplumbing.com",
  phone: "(512) 555-0142",
  phone_secondary: "(512) 555-0199",
  street: "1200 Congress Ave, Suite 300",
  city: "Austin",
  state: "TX",
  zip: "78701",
  country: "US",
  category: "Plumber",
  description: "Family-owned plumbing in Austin.",
  long_description: "Family-owned plumbing in Austin since 1998.",
  ai_category_estimation: ["Plumbing", "Home Services"],
  stars: 4.7,
  review_count: 312,
  website_schema_types: ["LocalBusiness", "Plumber"],
  last_buying_signal: new Date("2026-03-01T12:30:00Z"),
  buying_signal_type: ["new_website", "hiring"],
  last_updated: new Date("2026-04-02T06:00:00Z"),
  legal_name: "Lone Star Plumbing LLC",
  employees: 12,
  founded_date: "1998-05-04",
  number_of_locations: 2,
  is_chain: false,
  price_range: "$$",
  naics_code: "238220",
  founders: ["Ana Reyes", "Tom Reyes"],
  opening_hours: "Mo-Fr 08:00-17:00",
  social_profiles: { facebook: "https://www.facebook.com/lonestarplumbing" },
  web_technologies: ["WordPress", "Google Analytics"],
  registration_date: "2009-06-15",
  redirect: true,
  time_scraped: new Date("2026-10-30T14:30:00Z"),
  address_full: "1200 Congress Ave, Suite 300, Austin, TX 78701",
  address_source: "schema_org",
  email_primary_mx: "google.com",
  email_domain_mx: "outlook.com",
  email_security: ["spf", "dkim", "dmarc"],
  founder_emails: ["ana@lonestarplumbing.com", "tom@lonestarplumbing.com"],
  founder_phones: ["(512) 555-0111"],
  latitude: 30.274665,
  longitude: -97.74035,
  area_served: "Greater Austin Area",
  offers: "Free estimates",
  brand: "Lone Star",
  slogan: "Done right the first time",
  logo_url: "https://www.lonestarplumbing.com/logo.png",
  platform: "WordPress",
  booking_ops_crm_software: "Housecall Pro, Calendly",
  reputation_chat_software: "Podium",
  marketing_email_software: "Mailchimp",
  ad_pixels: "Meta Pixel, Google Ads",
  payment_financing_software: "Wisetack",
  open_positions: 0,
  rating_value: 4.8,
  duns: "123456789",
};

async function leadRows() {
  const rows = await sql<Record<string, unknown>>`
    select *, founded_date::text as founded_date, registration_date::text as registration_date
    from leads order by id`.execute(database.db);
  return rows.rows;
}

describe("NDJSON import", () => {
  it("maps every field to its column", async () => {
    const file = files.write("full.ndjson", ndjson([FULL]));
    const result = await importLeadFile(database.db, file);
    expect(result).toEqual({ imported: 1, updated: 0, rejected: 0, errors: [] });
    const [row] = await leadRows();
    expect(row).toMatchObject(FULL_ROW);
  });

  it("upserts by id: a second import updates the lead instead of adding one", async () => {
    await importLeadFile(database.db, files.write("a.ndjson", ndjson([FULL])));
    const changed = { id: "ext-1", companyName: "Lone Star Plumbing & Drain", state: "CA", stars: 3 };
    const result = await importLeadFile(
      database.db,
      files.write("b.ndjson", ndjson([changed, { id: "ext-2" }])),
    );
    expect(result).toEqual({ imported: 1, updated: 1, rejected: 0, errors: [] });
    const rows = await leadRows();
    expect(rows).toHaveLength(2);
    // The import carries the whole lead: fields it leaves out are cleared.
    expect(rows[0]).toMatchObject({
      external_id: "ext-1",
      company_name: "Lone Star Plumbing & Drain",
      state: "CA",
      stars: 3,
      email: null,
      founders: [],
      social_profiles: {},
    });
    expect((rows[0] as { updated_at: Date }).updated_at.getTime()).toBeGreaterThanOrEqual(
      (rows[0] as { created_at: Date }).created_at.getTime(),
    );
  });

  it("moves the buying signal when the full address gets a new value", async () => {
    await importLeadRecords(database.db, [
      { id: "fa", addressFull: "1 Main St, Austin, TX 78701", phone: "512" },
    ]);
    await importLeadRecords(database.db, [
      { id: "fa", addressFull: "9 Oak St, Austin, TX 78701", phone: "512" },
    ]);
    expect((await leadRows())[0]).toMatchObject({ buying_signal_type: ["Full Address"] });
    // Removed: the signal stays.
    await importLeadRecords(database.db, [{ id: "fa", phone: "512" }]);
    expect((await leadRows())[0]).toMatchObject({ buying_signal_type: ["Full Address"], address_full: null });
  });

  it("inserts rows without id as new leads every time", async () => {
    const file = files.write("noid.ndjson", ndjson([{ companyName: "A" }, { companyName: "B" }]));
    expect(await importLeadFile(database.db, file)).toMatchObject({ imported: 2, updated: 0 });
    expect(await importLeadFile(database.db, file)).toMatchObject({ imported: 2, updated: 0 });
    const rows = await leadRows();
    expect(rows.map((r) => [r.external_id, r.company_name])).toEqual([
      [null, "A"],
      [null, "B"],
      [null, "A"],
      [null, "B"],
    ]);
  });

  it("fills the registered URL from website, and lastUpdated from the import time", async () => {
    const before = Date.now() - 1000;
    await importLeadFile(database.db, files.write("w.ndjson", ndjson([{ id: "w", website: "acme.com" }])));
    const [row] = await leadRows();
    expect(row).toMatchObject({ registered_url: "acme.com", crawled_url: null });
    expect((row as { last_updated: Date }).last_updated.getTime()).toBeGreaterThan(before);
  });

  it("reports bad rows with their line number and imports the rest", async () => {
    const lines = [
      JSON.stringify({ id: "ok-1", companyName: "Good" }), // 1
      "{not json", // 2
      "", // 3: blank lines are skipped
      JSON.stringify({ id: "bad-stars", stars: 7 }), // 4
      JSON.stringify({ id: "bad-state", state: "Texas" }), // 5
      JSON.stringify({ id: "bad-type", reviewCount: "12", isChain: "yes" }), // 6
      JSON.stringify([1, 2]), // 7
      JSON.stringify({ id: "bad-ai", aiCategoryEstimation: ["a", "b", "c", "d"] }), // 8
      JSON.stringify({ id: "bad-date", lastBuyingSignal: "yesterday", foundedDate: "2026-02-30" }), // 9
      JSON.stringify({ id: "bad-email", email: "not-an-email", zip: "7870" }), // 10
      JSON.stringify({ id: "ok-2", stars: 0, reviewCount: 0 }), // 11
      JSON.stringify({ id: "bad-geo", latitude: 91, longitude: "-97.7", ratingValue: 5.5 }), // 12
      JSON.stringify({ id: "bad-site", redirect: "yes", registrationDate: "2026-13-01", timeScraped: "now" }), // 13
      JSON.stringify({ id: "bad-founder", founderEmails: ["ann@x.com", "nope"], founderPhones: "512" }), // 14
      JSON.stringify({ id: "bad-count", openPositions: -1, duns: "1234", websiteEmailSecurity: "spf" }), // 15
    ];
    const result = await importLeadFile(database.db, files.write("bad.ndjson", lines.join("\r\n")));
    expect(result.imported).toBe(2);
    expect(result.rejected).toBe(12);
    expect(result.errors.map((e) => e.line)).toEqual([2, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15]);
    const byLine = new Map(result.errors.map((e) => [e.line, e.message]));
    expect(byLine.get(2)).toMatch(/^invalid JSON/);
    expect(byLine.get(4)).toBe("stars must be a number from 0 to 5");
    expect(byLine.get(5)).toMatch(/^state must be a two-letter US state code/);
    expect(byLine.get(6)).toMatch(/reviewCount must be a whole number.*; isChain must be true or false/);
    expect(byLine.get(7)).toBe("a lead must be a JSON object");
    expect(byLine.get(8)).toMatch(/aiCategoryEstimation must have 1 to 3/);
    expect(byLine.get(9)).toMatch(
      /lastBuyingSignal must be an ISO 8601 date-time.*foundedDate must be a date/,
    );
    expect(byLine.get(10)).toMatch(/email must be an e-mail address.*zip must be a 5-digit ZIP/);
    expect(byLine.get(12)).toBe(
      "latitude must be a number from -90 to 90; longitude must be a number from -180 to 180; " +
        "ratingValue must be a number from 0 to 5",
    );
    expect(byLine.get(13)).toBe(
      "redirect must be true or false; registrationDate must be a date YYYY-MM-DD; " +
        "timeScraped must be an ISO 8601 date-time, for example 2026-03-01T12:00:00Z",
    );
    expect(byLine.get(14)).toBe(
      "founderEmails must hold e-mail addresses only; founderPhones must be an array of strings",
    );
    expect(byLine.get(15)).toBe(
      "openPositions must be a whole number of at least 0; " +
        "duns must be a 9-digit D-U-N-S number, for example 12-345-6789; " +
        "websiteEmailSecurity must be an array of strings",
    );
    expect((await leadRows()).map((r) => r.external_id)).toEqual(["ok-1", "ok-2"]);
  });

  it("keeps quotes, backslashes, braces, commas and NULL words in text and list items", async () => {
    const odd = ['say "hi"', "back\\slash", "{braces}", "a,b", "NULL", "ünïcödé ✓"];
    const record = {
      id: "odd",
      companyName: odd.join(" "),
      founders: odd,
      aiCategoryEstimation: odd.slice(0, 3),
    };
    await importLeadRecords(database.db, [record, { id: "odd2", socialProfiles: { x: 'a"b\\c' } }]);
    const rows = await leadRows();
    expect(rows[0]).toMatchObject({
      company_name: odd.join(" "),
      founders: odd,
      ai_category_estimation: odd.slice(0, 3),
    });
    expect(rows[1]).toMatchObject({ social_profiles: { x: 'a"b\\c' } });
  });

  it("lists at most 100 errors but counts every rejected row", async () => {
    const lines = Array.from({ length: 150 }, (_, i) => JSON.stringify({ id: `x${i}`, stars: -1 }));
    const result = await importLeadFile(database.db, files.write("many.ndjson", lines.join("\n")));
    expect(result.rejected).toBe(150);
    expect(result.errors).toHaveLength(100);
    expect(result.errors[0]).toEqual({ line: 1, message: "stars must be a number from 0 to 5" });
  });

  it("keeps the later line when an id repeats, within a batch and across batches in flight", async () => {
    const records = [];
    for (let i = 1; i <= 40; i += 1) records.push({ id: `r${i % 7}`, companyName: `version ${i}` });
    const result = await importLeadRecords(database.db, records, { batchSize: 3, concurrency: 4 });
    expect(result).toEqual({ imported: 7, updated: 33, rejected: 0, errors: [] });
    const rows = await leadRows();
    const latest = new Map<string, string>();
    for (const r of records) latest.set(r.id, r.companyName);
    expect(new Map(rows.map((r) => [r.external_id as string, r.company_name as string]))).toEqual(latest);
  });

  it("reads a file without extension as NDJSON when it starts with {, and refuses a JSON array", async () => {
    const plain = files.write("leads-export", ndjson([{ id: "p1" }]));
    expect(await importLeadFile(database.db, plain)).toMatchObject({ imported: 1 });
    const array = files.write("array.json", JSON.stringify([{ id: "p2" }]));
    await expect(importLeadFile(database.db, array)).rejects.toThrow(/JSON array is not read/);
    await expect(importLeadFile(database.db, files.path("missing.ndjson"))).rejects.toThrow(/no such file/);
  });

  it("imports from an async iterable", async () => {
    async function* source() {
      yield { id: "i1", state: "ny" };
      yield { id: "i2", stars: "x" };
    }
    const result = await importLeadRecords(database.db, source());
    expect(result).toEqual({
      imported: 1,
      updated: 0,
      rejected: 1,
      errors: [{ line: 2, message: "stars must be a number from 0 to 5" }],
    });
  });
});

describe("announcing an import", () => {
  /**
   * Listens to the import announcements while `run` runs, then sends a marker and returns, for
   * each announcement heard before the marker, how many leads were committed when it arrived.
   */
  async function announcements(run: () => Promise<unknown>): Promise<number[]> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const seen: Promise<number>[] = [];
    let marked: () => void = () => {};
    const marker = new Promise<void>((resolve) => (marked = resolve));
    client.on("notification", (msg) => {
      if (msg.payload === "marker") marked();
      else
        seen.push(
          sql<{ n: number }>`select count(*)::int as n from leads`
            .execute(database.db)
            .then((r) => r.rows[0]?.n ?? -1),
        );
    });
    try {
      await client.query(`listen ${LEADS_IMPORTED_CHANNEL}`);
      await run();
      // Notifications arrive in commit order: the marker comes after any announcement of `run`.
      await sql`select pg_notify(${LEADS_IMPORTED_CHANNEL}, 'marker')`.execute(database.db);
      await marker;
      return await Promise.all(seen);
    } finally {
      await client.end();
    }
  }

  it("tells every process once per import, after all of its batches are committed", async () => {
    const records = Array.from({ length: 2_500 }, (_, i) => ({
      id: `a${i}`,
      websiteSchemaTypes: ["Plumber"],
    }));
    const heard = await announcements(() =>
      importLeadRecords(database.db, records, { batchSize: 100, concurrency: 3 }),
    );
    expect(heard).toEqual([2_500]);
  });

  it("announces nothing when nothing was written", async () => {
    const heard = await announcements(() => importLeadRecords(database.db, [{ id: "bad", stars: 9 }]));
    expect(heard).toEqual([]);
  });
});

describe("CSV import", () => {
  const header = Object.keys(FULL).join(",");
  const csvCell = (value: unknown): string => {
    const text =
      value === null
        ? ""
        : Array.isArray(value)
          ? value.join("|")
          : typeof value === "object"
            ? JSON.stringify(value)
            : String(value);
    return /[",\n|]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };

  it("maps every column, with lists separated by | or ; or written as JSON arrays", async () => {
    const row = Object.values(FULL).map(csvCell).join(",");
    const second = Object.entries({
      ...FULL,
      id: "ext-2",
      founders: '["Ana Reyes","Tom Reyes"]',
      webTechnologies: "WordPress; Google Analytics",
      isChain: "no",
      description: "line one,\nline two",
    })
      .map(([, v]) => csvCell(v))
      .join(",");
    const file = files.write("full.csv", `\uFEFF${header}\n${row}\n${second}\n`);
    const result = await importLeadFile(database.db, file);
    expect(result).toEqual({ imported: 2, updated: 0, rejected: 0, errors: [] });
    const rows = await leadRows();
    expect(rows[0]).toMatchObject(FULL_ROW);
    expect(rows[1]).toMatchObject({
      ...FULL_ROW,
      external_id: "ext-2",
      description: "line one,\nline two",
    });
  });

  it("accepts database-style aliases as headers and treats empty cells as no value", async () => {
    const file = files.write(
      "alias.csv",
      "wId,wCompanyName,wPhonePrimary,wState,wStars,unknownColumn\nA1,Acme,(512) 555-0100,ca,,whatever\n",
    );
    expect(await importLeadFile(database.db, file)).toMatchObject({ imported: 1, rejected: 0 });
    expect((await leadRows())[0]).toMatchObject({
      external_id: "A1",
      company_name: "Acme",
      phone: "(512) 555-0100",
      state: "CA",
      stars: null,
    });
  });

  it("reads the new fields under the real service's names, in their CSV forms", async () => {
    const header = [
      "wId",
      "wProfileDate",
      "wRedirectYn",
      "wTimeScraped",
      "wEmailPrimaryMx",
      "wEmailDomainMx",
      "wEmailSecurity",
      "wFounderEmail",
      "wFounderPhone",
      "wGeoLat",
      "wGeoLong",
      "wOpenPositions",
      "wRatingValue",
      "wDuns",
      "wAddressFull",
      "wPlatform",
    ].join(",");
    const rows = [
      'n1,2019-02-03,Yes,2026-09-01 14:30:00,GOOGLE.COM,outlook.com,spf;DMARC,"a@x.com|b@x.com",(512) 555-0101,30.25,-97.75,3,4.5,123456789,"1 Main St, Austin, TX",Wix',
      "n2,,no,,,,[],,,,,0,,,,",
      "n3,2019-02-30,maybe,yesterday,,,,x@,,95,-200,1.5,6,12345,,", // line 4: every problem
    ];
    const file = files.write("new-fields.csv", `${header}\n${rows.join("\n")}\n`);
    const result = await importLeadFile(database.db, file);
    expect(result).toMatchObject({ imported: 2, rejected: 1 });
    expect(result.errors).toEqual([
      {
        line: 4,
        message:
          // Named by the API's field names, whatever the header called them.
          "registrationDate must be a date YYYY-MM-DD; redirect must be true or false; " +
          "timeScraped must be an ISO 8601 date-time, for example 2026-03-01T12:00:00Z; " +
          "founderEmails must hold e-mail addresses only; latitude must be a number from -90 to 90; " +
          "longitude must be a number from -180 to 180; openPositions must be a whole number of at least 0; " +
          "ratingValue must be a number from 0 to 5; duns must be a 9-digit D-U-N-S number, for example 12-345-6789",
      },
    ]);
    const [n1, n2] = await leadRows();
    expect(n1).toMatchObject({
      external_id: "n1",
      registration_date: "2019-02-03",
      redirect: true,
      time_scraped: new Date("2026-09-01T14:30:00Z"),
      email_primary_mx: "google.com",
      email_domain_mx: "outlook.com",
      email_security: ["spf", "dmarc"],
      founder_emails: ["a@x.com", "b@x.com"],
      founder_phones: ["(512) 555-0101"],
      latitude: 30.25,
      longitude: -97.75,
      open_positions: 3,
      rating_value: 4.5,
      duns: "123456789",
      address_full: "1 Main St, Austin, TX",
      platform: "Wix",
    });
    expect(n2).toMatchObject({
      external_id: "n2",
      registration_date: null,
      redirect: false,
      email_security: [],
      founder_emails: [],
      latitude: null,
      open_positions: 0,
      duns: null,
    });
  });

  it("reports bad rows with their line and upserts by id", async () => {
    await importLeadFile(database.db, files.write("first.csv", "id,companyName\nc1,Old name\n"));
    const text = [
      "id,companyName,stars,state,reviewCount", // 1
      "c1,New name,4.5,tx,10", // 2: updates c1
      "c2,Stars,abc,tx,1", // 3
      "c3,Too,few", // 4
      "c4,State,1,XX,1", // 5
      "c5,Count,1,TX,1.5", // 6
      'c6,"Quoted, name",5,zz,2', // 7: bad state
      "c7,Fine,,,", // 8
    ].join("\n");
    const result = await importLeadFile(database.db, files.write("mixed.csv", text));
    expect(result).toMatchObject({ imported: 1, updated: 1, rejected: 5 });
    expect(result.errors).toEqual([
      { line: 3, message: "stars must be a number from 0 to 5" },
      { line: 4, message: "expected 5 fields as in the header, found 3" },
      { line: 5, message: "state must be a two-letter US state code, for example TX" },
      { line: 6, message: "reviewCount must be a whole number of at least 0" },
      { line: 7, message: "state must be a two-letter US state code, for example TX" },
    ]);
    const rows = await leadRows();
    expect(rows.map((r) => [r.external_id, r.company_name, r.stars])).toEqual([
      ["c1", "New name", 4.5],
      ["c7", "Fine", null],
    ]);
  });

  it("reports a row the CSV parser cannot read with its line and keeps the rows before it", async () => {
    const file = files.write("quote.csv", 'id,companyName\nq1,ok\nq2,"bad"quote\n');
    const result = await importLeadFile(database.db, file);
    // After a broken quote the parser reads on in a quoted field: the end of the file is reported too.
    expect(result).toMatchObject({ imported: 1, rejected: 2 });
    expect(result.errors[0]).toMatchObject({ line: 3 });
    expect(result.errors[0]?.message).toMatch(/^invalid CSV: Invalid Closing Quote/);
    expect(result.errors[1]?.message).toMatch(/^invalid CSV: Quote Not Closed/);
  });

  it("refuses a CSV whose header names no lead field", async () => {
    const file = files.write("nothing.csv", "foo,bar\n1,2\n");
    await expect(importLeadFile(database.db, file)).rejects.toThrow(/header names no lead field/);
  });
});

describe("record validation", () => {
  it("reads CSV strings as numbers and booleans, JSON keeps types strict", () => {
    const csv = validateLeadRecord(
      { stars: "4.5", reviewCount: "3", isChain: "TRUE", employees: "0" },
      "csv",
    );
    expect(csv).toMatchObject({
      ok: true,
      row: { stars: 4.5, review_count: 3, is_chain: true, employees: 0 },
    });
    const json = validateLeadRecord({ stars: "4.5" }, "json");
    expect(json).toEqual({ ok: false, problems: ["stars must be a number from 0 to 5"] });
  });

  it("reads date-times without offset as UTC and empty AI categories as not classified", () => {
    const result = validateLeadRecord(
      { lastUpdated: "2026-01-02 03:04:05", lastBuyingSignal: "2026-01-02", aiCategoryEstimation: [] },
      "json",
    );
    expect(result).toMatchObject({
      ok: true,
      row: {
        last_updated: "2026-01-02T03:04:05.000Z",
        last_buying_signal: "2026-01-02T00:00:00.000Z",
        ai_category_estimation: null,
      },
    });
  });
});

describe("npm run admin -- import-leads", () => {
  it("prints one JSON line with the counts and the errors", async () => {
    const file = files.write("cli.ndjson", ndjson([{ id: "cli-1" }, { id: "cli-2", stars: 9 }]));
    const run = await runAdminCli(database.url, ["import-leads", file]);
    expect(run.code).toBe(0);
    expect(run.lines).toHaveLength(1);
    expect(run.json).toEqual({
      imported: 1,
      updated: 0,
      rejected: 1,
      errors: [{ line: 2, message: "stars must be a number from 0 to 5" }],
    });
    const again = await runAdminCli(database.url, ["import-leads", file, "--concurrency", "1"]);
    expect(again.json).toMatchObject({ imported: 0, updated: 1, rejected: 1 });
  });

  it("fails with an error line and exit code 1 on a missing file", async () => {
    const run = await runAdminCli(database.url, ["import-leads", files.path("nope.csv")]);
    expect(run.code).toBe(1);
    expect(run.lines).toHaveLength(1);
    expect(run.json.error).toMatch(/no such file/);
  });
});
