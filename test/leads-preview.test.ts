import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { generateLeads } from "../src/leads/import/generate.js";
import { importLeadRecords } from "../src/leads/import/importer.js";
import { maskEmail, maskPhone, toLead, toMaskedLead } from "../src/leads/presenter.js";
import { LEAD_RECORD_COLUMNS, leadRecordFromRow } from "../src/leads/repository.js";
import { maskEmailSql, maskPhoneSql, previewLeadJsonSql } from "../src/leads/search/preview-sql.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { expectKeyAndPlanRequired } from "./helpers/lead-records-factories.js";
import { buildLead, buildLeads, markReceived, uniqueWord } from "./helpers/leads-factories.js";

const t = useTestApp();

describe("GET /leads/preview", () => {
  it("answers the counts, the cost and a page of all matches; nothing charged or recorded", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db, { monthlyCredits: 2 });
    const a = uniqueWord();
    const leadIds = await buildLeads(t.ctx.db, 5, (i) => ({
      company_name: `${a} ${i}`,
      phone: "(512) 555-0142",
      phone_secondary: "+1 737 555 0199",
      email: "hello@domain.com",
      email_tier2: "jo@shop.io",
    }));
    await markReceived(t.ctx.db, accountId, [leadIds[1]!]);
    const res = await t
      .request()
      .get("/api/v1/leads/preview")
      .query({ positiveKeywords: a, sortBy: "id", sortOrder: "asc", limit: 2 })
      .set(auth)
      .expect(200);
    expect(res.headers["x-credits-capped"]).toBeUndefined();
    const data = res.body.data;
    expect(data.preview).toBe(true);
    expect(data.databaseType).toBe("other");
    // Not capped by the balance (2 credits for 4 new leads): the preview shows every match.
    expect(data.pagination).toEqual({ page: 1, limit: 2, total: 5, pages: 3 });
    expect(data.summary).toEqual({
      totalMatches: 5,
      newLeads: 4,
      alreadyReceived: 1,
      exportCost: 4,
      creditsRemaining: 2,
    });
    const [fresh, owned] = data.leads;
    expect(fresh).toMatchObject({
      id: leadIds[0],
      companyName: `${a} 0`,
      phone: "(512) ***-**42",
      phoneSecondary: "(737) ***-**99",
      email: "hel*@domain.com",
      emailTier2: "j*@shop.io",
      emailSecondary: null,
      phoneTotal: 2,
    });
    expect(owned).toMatchObject({
      id: leadIds[1],
      phone: "(512) 555-0142",
      phoneSecondary: "+1 737 555 0199",
      email: "hello@domain.com",
      emailTier2: "jo@shop.io",
    });

    const charges = await t.ctx.db
      .selectFrom("credit_ledger")
      .select("id")
      .where("account_id", "=", accountId)
      .where("kind", "=", "charge")
      .execute();
    expect(charges).toEqual([]);
    const history = await t.ctx.db
      .selectFrom("lead_export_history")
      .select("lead_id")
      .where("account_id", "=", accountId)
      .execute();
    expect(history).toEqual([{ lead_id: leadIds[1] }]);
  });

  it("another account's history does not unmask leads (account isolation)", async () => {
    const one = await buildAccount(t.ctx.db);
    const two = await buildAccount(t.ctx.db);
    const a = uniqueWord();
    const leadIds = await buildLeads(t.ctx.db, 1, () => ({ company_name: a, email: "owner@biz.com" }));
    await markReceived(t.ctx.db, two.accountId, leadIds);
    const res = await t
      .request()
      .get("/api/v1/leads/preview")
      .query({ positiveKeywords: a })
      .set(one.auth)
      .expect(200);
    expect(res.body.data.leads[0].email).toBe("own*@biz.com");
    expect(res.body.data.summary).toMatchObject({ newLeads: 1, alreadyReceived: 0 });
  });

  it("without a positive filter: 200, no leads, requiresKeywords and a message; nothing searched", async () => {
    const { auth } = await buildAccount(t.ctx.db, { monthlyCredits: 7 });
    const w = uniqueWord();
    await buildLeads(t.ctx.db, 2, () => ({ company_name: `${w} co`, state: "TX" }));
    for (const query of [{}, { negativeKeywords: w, stateInclude: "TX", limit: 25, page: 2 }]) {
      const res = await t.request().get("/api/v1/leads/preview").query(query).set(auth).expect(200);
      expect(res.body.data).toEqual({
        leads: [],
        pagination: { page: "page" in query ? 2 : 1, limit: "limit" in query ? 25 : 100, total: 0, pages: 0 },
        databaseType: "other",
        preview: true,
        summary: { totalMatches: 0, newLeads: 0, alreadyReceived: 0, exportCost: 0, creditsRemaining: 7 },
        requiresKeywords: true,
        message: expect.stringContaining("positiveKeywords"),
      });
      expect(res.body.data.message).toContain("nameIncludeTerms");
    }
    // No lead query is run: a new account's lead query slots are not even created.
    const fresh = await buildAccount(t.ctx.db);
    await t.request().get("/api/v1/leads/preview").query({ stateInclude: "TX" }).set(fresh.auth).expect(200);
    const slots = await sql<{ n: number }>`select count(*)::int as n from lead_query_slots
      where account_id = ${fresh.accountId}`.execute(t.ctx.db);
    expect(slots.rows[0]!.n).toBe(0);
  });

  it("bad input is still 400 validation_error with details, positive filter or not", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    for (const query of [
      "stateInclude=Texas",
      "positiveKeywords=x&limit=0",
      "negativeKeywords=x&sortBy=nope",
      "positiveKeywords=x&excludePurchased=yes",
      "positiveKeywords=x&excludePurchased=true&excludePurchased=false",
      "positiveKeywords=x&excludePurchased=1",
      // maxCredits and maxResults are GET /leads parameters only: unknown here.
      "positiveKeywords=x&maxCredits=5",
      "positiveKeywords=x&maxResults=5",
    ]) {
      const res = await t.request().get(`/api/v1/leads/preview?${query}`).set(auth).expect(400);
      expect(res.body.error, query).toBe("validation_error");
      expect(res.body.details?.length, query).toBeGreaterThan(0);
    }
  });

  it("needs a valid, unrevoked key of an account with a paid plan", async () => {
    await expectKeyAndPlanRequired(t, [
      { method: "get", path: "/api/v1/leads/preview?positiveKeywords=x" },
      { method: "get", path: "/api/v1/leads/preview?stateInclude=TX" },
    ]);
  });
});

describe("contactExported", () => {
  it("is true on leads the account already received (unmasked), false on the others (masked)", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const w = uniqueWord();
    const leadIds = await buildLeads(t.ctx.db, 2, (i) => ({
      company_name: `${w} ${i}`,
      phone: "(512) 555-0142",
      email: "hello@domain.com",
      founder_emails: ["ann@domain.com", "jo@domain.com"],
      founder_phones: ["+1 (737) 555-0101", "12"],
    }));
    await markReceived(t.ctx.db, accountId, [leadIds[1]!]);
    const res = await t
      .request()
      .get("/api/v1/leads/preview")
      .query({ positiveKeywords: w, sortBy: "id", sortOrder: "asc" })
      .set(auth)
      .expect(200);
    const [fresh, owned] = res.body.data.leads;
    expect(fresh).toMatchObject({
      id: leadIds[0],
      contactExported: false,
      phone: "(512) ***-**42",
      email: "hel*@domain.com",
      founderEmails: ["an*@domain.com", "j*@domain.com"],
      founderPhones: ["(737) ***-**01", "***"],
    });
    expect(owned).toMatchObject({
      id: leadIds[1],
      contactExported: true,
      phone: "(512) 555-0142",
      email: "hello@domain.com",
      founderEmails: ["ann@domain.com", "jo@domain.com"],
      founderPhones: ["+1 (737) 555-0101", "12"],
    });
    // contactExported comes last, after every field of the Lead.
    expect(Object.keys(fresh).at(-1)).toBe("contactExported");
  });

  it("another account's received leads are never contactExported for this one", async () => {
    const one = await buildAccount(t.ctx.db);
    const two = await buildAccount(t.ctx.db);
    const w = uniqueWord();
    const leadIds = await buildLeads(t.ctx.db, 2, () => ({
      company_name: `${w} co`,
      email: "owner@biz.com",
    }));
    await markReceived(t.ctx.db, two.accountId, leadIds);
    await markReceived(t.ctx.db, one.accountId, [leadIds[0]!]);
    const res = await t
      .request()
      .get("/api/v1/leads/preview")
      .query({ positiveKeywords: w, sortBy: "id", sortOrder: "asc" })
      .set(one.auth)
      .expect(200);
    expect(res.body.data.leads.map((l: { contactExported: boolean }) => l.contactExported)).toEqual([
      true,
      false,
    ]);
    expect(res.body.data.leads[1].email).toBe("own*@biz.com");
  });
});

describe("excludePurchased", () => {
  it("true: leads the account received are filtered out before paging; pages stay full, counts cover new leads", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const w = uniqueWord();
    const leadIds = await buildLeads(t.ctx.db, 6, (i) => ({ company_name: `${w} ${i}` }));
    await markReceived(t.ctx.db, accountId, [leadIds[0]!, leadIds[2]!]);
    const page = async (query: Record<string, string | number>) =>
      (
        await t
          .request()
          .get("/api/v1/leads/preview")
          .query({ positiveKeywords: w, sortBy: "id", sortOrder: "asc", limit: 2, ...query })
          .set(auth)
          .expect(200)
      ).body.data;
    const first = await page({ excludePurchased: "true" });
    expect(first.leads.map((l: { id: number }) => l.id)).toEqual([leadIds[1], leadIds[3]]);
    expect(first.pagination).toEqual({ page: 1, limit: 2, total: 4, pages: 2 });
    expect(first.summary).toMatchObject({ totalMatches: 4, newLeads: 4, alreadyReceived: 0, exportCost: 4 });
    const second = await page({ excludePurchased: "true", page: 2 });
    expect(second.leads.map((l: { id: number }) => l.id)).toEqual([leadIds[4], leadIds[5]]);
    expect(second.leads.every((l: { contactExported: boolean }) => !l.contactExported)).toBe(true);
    // false, or absent: every match.
    for (const query of [{ excludePurchased: "false" }, {}] as Record<string, string>[]) {
      const all = await page(query);
      expect(all.leads.map((l: { id: number }) => l.id)).toEqual([leadIds[0], leadIds[1]]);
      expect(all.summary).toMatchObject({ totalMatches: 6, newLeads: 4, alreadyReceived: 2 });
    }
  });

  it("uses this account's history only (another account's received leads stay in)", async () => {
    const one = await buildAccount(t.ctx.db);
    const two = await buildAccount(t.ctx.db);
    const w = uniqueWord();
    const leadIds = await buildLeads(t.ctx.db, 2, () => ({ company_name: `${w} co` }));
    await markReceived(t.ctx.db, two.accountId, leadIds);
    const res = await t
      .request()
      .get("/api/v1/leads/preview")
      .query({ positiveKeywords: w, excludePurchased: "true", sortBy: "id", sortOrder: "asc" })
      .set(one.auth)
      .expect(200);
    expect(res.body.data.leads.map((l: { id: number }) => l.id)).toEqual(leadIds);
  });
});

describe("the preview's leads built by PostgreSQL", () => {
  /** Contact values of every kind maskPhone and maskEmail meet. */
  const PHONES = [
    null,
    "",
    "12",
    "555-0142",
    "512555014",
    "(512) 555-0142",
    "512.555.0142",
    "+1 (512) 555-0142",
    "15125550142",
    "25125550142",
    "+44 20 7946 0958 ext 12",
    "phone: n/a",
    "٥١٢٥٥٥٠١٤٢ (Arabic-Indic digits)",
    "(512) 555-0142 🙂",
  ];
  const EMAILS = [
    null,
    "",
    "@",
    "@domain.com",
    "a@",
    "a@b.c",
    "ab@x.com",
    "abc@x.com",
    "abcd@x.com",
    "hello@domain.com",
    "first.last+tag@sub.domain.com",
    "two@at@signs.com",
    "no-at-sign",
    "ÉLodie@café.fr",
    "名前名前@例え.jp",
    'q"uote@example.com',
    "back\\slash@example.com",
  ];

  it("maskPhoneSql and maskEmailSql equal maskPhone and maskEmail on every kind of value", async () => {
    for (const value of PHONES) {
      const { rows } = await sql<{
        m: string | null;
      }>`select ${maskPhoneSql(sql`${value}::text`)} as m`.execute(t.ctx.db);
      expect(rows[0]!.m, JSON.stringify(value)).toBe(maskPhone(value));
    }
    for (const value of EMAILS) {
      const { rows } = await sql<{
        m: string | null;
      }>`select ${maskEmailSql(sql`${value}::text`)} as m`.execute(t.ctx.db);
      expect(rows[0]!.m, JSON.stringify(value)).toBe(maskEmail(value));
    }
    // Outside the Basic Multilingual Plane maskEmail counts UTF-16 units and would cut a surrogate
    // pair; the SQL counts characters and keeps them whole.
    const { rows } = await sql<{
      m: string;
    }>`select ${maskEmailSql(sql`${"🙂🙂@x.com"}::text`)} as m`.execute(t.ctx.db);
    expect(rows[0]!.m).toBe("🙂*@x.com");
  });

  it("is toMaskedLead (not received) or toLead (received) with contactExported, fields in order", async () => {
    const { accountId } = await buildAccount(t.ctx.db);
    const ids: number[] = [];
    for (let i = 0; i < Math.max(PHONES.length, EMAILS.length); i += 1) {
      ids.push(
        await buildLead(t.ctx.db, {
          phone: PHONES[i % PHONES.length] ?? null,
          phone_secondary: PHONES[(i + 3) % PHONES.length] ?? null,
          email: EMAILS[i % EMAILS.length] ?? null,
          email_secondary: EMAILS[(i + 1) % EMAILS.length] ?? null,
          email_tier1: EMAILS[(i + 2) % EMAILS.length] ?? null,
          email_tier6: EMAILS[(i + 5) % EMAILS.length] ?? null,
          founder_emails:
            i % 3 === 0 ? [] : EMAILS.filter((e): e is string => e !== null).slice(i % 5, (i % 5) + 3),
          founder_phones:
            i % 4 === 0 ? [] : PHONES.filter((p): p is string => p !== null).slice(i % 6, (i % 6) + 2),
          social_profiles: JSON.stringify(i % 2 ? { x: "https://x.example/a" } : {}),
        }),
      );
    }
    const word = uniqueWord();
    const records = [...generateLeads(100, 91)].map((record) => ({ ...record, id: `${word}-${record.id}` }));
    await importLeadRecords(t.ctx.db, records);
    const imported = await t.ctx.db
      .selectFrom("leads")
      .select("id")
      .where("external_id", "like", `${word}-%`)
      .execute();
    ids.push(...imported.map((row) => row.id));
    await markReceived(
      t.ctx.db,
      accountId,
      ids.filter((_, i) => i % 2 === 1),
    );
    for (const [i, id] of ids.entries()) {
      const received = i % 2 === 1;
      const { rows } = await sql<{
        json: string;
      }>`select ${previewLeadJsonSql("l", sql<boolean>`${received}`)} as json
        from leads l where l.id = ${id}`.execute(t.ctx.db);
      const row = await t.ctx.db
        .selectFrom("leads")
        .select(LEAD_RECORD_COLUMNS)
        .where("id", "=", id)
        .executeTakeFirstOrThrow();
      const record = leadRecordFromRow(row);
      const expected = { ...(received ? toLead(record) : toMaskedLead(record)), contactExported: received };
      expect(JSON.parse(rows[0]!.json), `lead ${id}`).toEqual(expected);
      expect(JSON.stringify(JSON.parse(rows[0]!.json)), `lead ${id}`).toBe(JSON.stringify(expected));
    }
  });
});

describe("masking", () => {
  it("keeps the area code and the last two digits of a phone", () => {
    expect(maskPhone("(512) 555-0142")).toBe("(512) ***-**42");
    expect(maskPhone("512.555.0142")).toBe("(512) ***-**42");
    expect(maskPhone("+1 (512) 555-0142")).toBe("(512) ***-**42");
    expect(maskPhone("12")).toBe("***");
    expect(maskPhone(null)).toBeNull();
  });

  it("keeps the first three characters of the local part and the domain of an e-mail", () => {
    expect(maskEmail("hello@domain.com")).toBe("hel*@domain.com");
    expect(maskEmail("ab@x.com")).toBe("a*@x.com");
    expect(maskEmail("not-an-email")).toBe("***");
    expect(maskEmail(null)).toBeNull();
  });
});
