import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { generateLeads } from "../src/leads/import/generate.js";
import { importLeadRecords } from "../src/leads/import/importer.js";
import { toLead } from "../src/leads/presenter.js";
import { leadJsonSql } from "../src/leads/presenter-sql.js";
import { LEAD_RECORD_COLUMNS, leadRecordFromRow } from "../src/leads/repository.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLead, uniqueWord } from "./helpers/leads-factories.js";

// `GET /leads` writes its page's leads as PostgreSQL builds them (leadJsonSql); every other
// answer builds the Lead with toLead from the LeadRecord. Both must give the same Lead.

const t = useTestApp();

/** Every kind of value a column can hold: nulls, empty values, lists, escapes, dates with milliseconds. */
const EDGE_LEADS = [
  {
    company_name: null,
    registered_url: null,
    crawled_url: "https://crawled.example/path?q=1",
    email: null,
    phone: null,
    phone_secondary: "",
    street: null,
    city: null,
    state: null,
    zip: null,
    country: null,
    category: null,
    description: null,
    stars: null,
    review_count: null,
    last_buying_signal: null,
    last_updated: null,
    founded_date: null,
    ai_category_estimation: null,
    registration_date: null,
    redirect: null,
    time_scraped: null,
    latitude: null,
    open_positions: null,
    rating_value: null,
  },
  {
    registered_url: "https://registered.example",
    crawled_url: "https://crawled.example",
    phone: "+1 (512) 555-0100",
    phone_secondary: "512.555.0199",
    email_secondary: "b@example.com",
    email_tier1: "t1@example.com",
    email_tier6: "t6@example.com",
    stars: 3.7,
    review_count: 0,
    ai_category_estimation: ["Plumber", 'Heating "HVAC"'],
    website_schema_types: ["LocalBusiness", "Plumber"],
    buying_signal_type: ["hiring", "new_location"],
    founders: ["Ann O'Neil", "Back\\slash"],
    web_technologies: ["WordPress"],
    employees: 12,
    number_of_locations: 3,
    is_chain: false,
    price_range: "$$",
    legal_name: "Registered Legal Name LLC",
    naics_code: "238220",
    opening_hours: "Mo-Fr 08:00-17:00",
    long_description: "Line one\nline two\ttabbed \u0001 control, \u2028 separator, é, 🙂, </script>",
    description: 'Quotes " and \\ backslashes',
    last_buying_signal: new Date("2026-03-04T05:06:07.089Z"),
    last_updated: new Date("2025-12-31T23:59:59.999Z"),
    founded_date: "1999-12-31",
    social_profiles: JSON.stringify({ linkedin: "https://linkedin.example/x", x: "https://x.example/y" }),
    registration_date: "2004-02-29",
    redirect: true,
    time_scraped: new Date("2026-10-31T23:59:59.001Z"),
    address_full: '1 "Main" St, Austin, TX 78701',
    address_source: "schema_org",
    email_primary_mx: "google.com",
    email_domain_mx: "secureserver.net",
    email_security: ["spf", "dkim", "dmarc", "bimi"],
    founder_emails: ["ann@example.com", 'q"uote@example.com'],
    founder_phones: ["(512) 555-0101", "+1 512 555 0102"],
    latitude: 0.1 + 0.2,
    longitude: -97.123456789012,
    area_served: "Greater Austin\nArea",
    offers: '10% off, "today"',
    brand: "Acme",
    slogan: "</script> 🙂",
    logo_url: "https://registered.example/logo.png?x=1&y=2",
    platform: "WordPress",
    booking_ops_crm_software: "Housecall Pro, Calendly",
    reputation_chat_software: "Podium",
    marketing_email_software: "Mailchimp",
    ad_pixels: "Meta Pixel",
    payment_financing_software: "Wisetack",
    open_positions: 0,
    rating_value: 4.75,
    duns: "012345678",
  },
  {
    stars: 5,
    ai_category_estimation: [],
    website_schema_types: [],
    is_chain: true,
    founded_date: "2024-02-29",
    last_buying_signal: new Date("2026-11-01T00:00:00.000Z"),
    redirect: false,
    email_security: [],
    founder_emails: [],
    latitude: -90,
    longitude: 180,
    rating_value: 0,
    open_positions: 2_147_483_647,
  },
];

/** The Lead toLead builds from the row of `id`. */
async function presented(id: number) {
  const row = await t.ctx.db
    .selectFrom("leads")
    .select(LEAD_RECORD_COLUMNS)
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
  return toLead(leadRecordFromRow(row));
}

/** The Lead's JSON text leadJsonSql builds for `id`. */
async function fromSql(id: number): Promise<string> {
  const { rows } = await sql<{
    json: string;
  }>`select ${leadJsonSql("l")} as json from leads l where l.id = ${id}`.execute(t.ctx.db);
  return rows[0]!.json;
}

describe("the Lead built by PostgreSQL", () => {
  let ids: number[];

  beforeAll(async () => {
    ids = [];
    for (const lead of EDGE_LEADS) ids.push(await buildLead(t.ctx.db, lead));
    const word = uniqueWord();
    const records = [...generateLeads(300, 77)].map((record) => ({ ...record, id: `${word}-${record.id}` }));
    await importLeadRecords(t.ctx.db, records);
    const imported = await t.ctx.db
      .selectFrom("leads")
      .select("id")
      .where("external_id", "like", `${word}-%`)
      .execute();
    expect(imported).toHaveLength(300);
    ids.push(...imported.map((row) => row.id));
  });

  it("has the same fields, values and order as toLead, for every kind of value", async () => {
    for (const id of ids) {
      const text = await fromSql(id);
      const expected = await presented(id);
      // Same values, and the same order of fields (of socialProfiles too) once re-serialised.
      expect(JSON.parse(text), `lead ${id}`).toEqual(expected);
      expect(JSON.stringify(JSON.parse(text)), `lead ${id}`).toBe(JSON.stringify(expected));
    }
  });

  it("is what GET /leads answers, for leads with every kind of value", async () => {
    const { auth } = await buildAccount(t.ctx.db, { plan: "enterprise" });
    const word = uniqueWord();
    const edge: number[] = [];
    for (const lead of EDGE_LEADS)
      edge.push(await buildLead(t.ctx.db, { ...lead, company_name: `${word} co` }));
    const res = await t
      .request()
      .get("/api/v1/leads")
      .query({ positiveKeywords: word, sortBy: "id", sortOrder: "asc" })
      .set(auth)
      .expect(200);
    expect(res.body.data.leads).toEqual(await Promise.all(edge.map(presented)));
    expect(res.body.data.pagination.total).toBe(edge.length);
  });
});
