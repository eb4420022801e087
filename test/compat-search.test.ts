import { beforeAll, describe, expect, it } from "vitest";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLead, markReceived, type LeadInput } from "./helpers/leads-factories.js";
import { pyUrlencode } from "./helpers/python-encoding.js";

// The real service's documented search calls (SKILL.md's examples and translation table,
// REFERENCE.md section 2 and 3, smb_api.py's docstring), sent as its client `smb_api.py` encodes
// them, replayed on leads this file builds: the leads each call finds, what it charges (GET /me,
// the ledger), the lead export history it writes, and the fields of its answer. Every answer is
// checked against openapi.yaml by the test app (test/setup.ts fails a test that got one that is
// not). Each test file has a database of its own, so the documented keywords find only these leads.

const t = useTestApp();

type Auth = { Authorization: string };
type Params = Record<string, unknown>;

/** smb_api.py's comma-separated parameters (COMMA_LIST_PARAMS). */
const COMMA_LIST_PARAMS = new Set([
  "stateInclude",
  "stateExclude",
  "websiteSchemaFilter",
  "buyingSignalTypeFilter",
  "updateReasonFilter",
]);
const STRING_OK_KEYS = new Set(["positiveKeywords", "negativeKeywords", "orColumns"]);
const LIST_SUFFIXES = ["Include", "Exclude", "IncludeTerms", "ExcludeTerms", "Values"];

/** smb_api.py's `_is_list_param`: the parameters the API reads as a JSON array. */
const isListParam = (key: string) =>
  !COMMA_LIST_PARAMS.has(key) && (STRING_OK_KEYS.has(key) || LIST_SUFFIXES.some((s) => key.endsWith(s)));

/** smb_api.py's `_as_list`: a JSON-array string parsed, any other text split at commas and trimmed. */
function asList(value: string): unknown[] {
  const stripped = value.trim();
  if (stripped.startsWith("[")) {
    try {
      const parsed: unknown = JSON.parse(stripped);
      if (Array.isArray(parsed)) return parsed;
    } catch {
      // not JSON: split below
    }
  }
  return value
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
}

/**
 * smb_api.py's `encode_query` then `urllib.parse.urlencode`: lists as compact JSON arrays
 * (`json.dumps(..., separators=(",", ":"))`, numbers as text), the comma-separated parameters
 * joined with `,`, booleans `true`/`false`, numbers as text; `quote_plus` (space as `+`).
 */
function smbQuery(params: Params): string {
  const pairs: Record<string, string> = {};
  for (const [key, raw] of Object.entries(params)) {
    if (raw === null || raw === undefined) continue;
    let value = raw;
    if (isListParam(key) && (typeof value === "string" || typeof value === "number")) {
      value = asList(String(value));
    }
    if (typeof value === "boolean") pairs[key] = value ? "true" : "false";
    else if (typeof value === "number") pairs[key] = String(value);
    else if (Array.isArray(value)) {
      pairs[key] = COMMA_LIST_PARAMS.has(key)
        ? value.map((item) => String(item).trim()).join(",")
        : JSON.stringify(
            value.map((item) => (typeof item === "string" || typeof item === "object" ? item : String(item))),
          );
    } else if (typeof value === "object") pairs[key] = JSON.stringify(value);
    else {
      const text = String(value);
      pairs[key] = COMMA_LIST_PARAMS.has(key) && text.trim().startsWith("[") ? asList(text).join(",") : text;
    }
  }
  return pyUrlencode(pairs);
}

interface LeadAnswer {
  id: number;
  companyName: string | null;
  phone: string | null;
  email: string | null;
  contactExported?: boolean;
  [field: string]: unknown;
}

/** One call as smb_api.py sends it. */
async function call(auth: Auth, path: "/leads" | "/leads/preview", params: Params, status = 200) {
  const res = await t
    .request()
    .get(`/api/v1${path}?${smbQuery(params)}`)
    .set(auth);
  expect(res.status, `${path}?${smbQuery(params)}: ${JSON.stringify(res.body).slice(0, 400)}`).toBe(status);
  return res;
}

const leadsOf = (res: { body: { data: { leads: LeadAnswer[] } } }) => res.body.data.leads;
const namesOf = (res: { body: { data: { leads: LeadAnswer[] } } }) =>
  leadsOf(res)
    .map((l) => l.companyName ?? "")
    .sort();

async function creditsOf(auth: Auth): Promise<number> {
  const res = await t.request().get("/api/v1/me").set(auth).expect(200);
  return res.body.data.totalCreditsRemaining as number;
}

async function chargedTenths(accountId: number): Promise<number> {
  const row = await t.ctx.db
    .selectFrom("credit_ledger")
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>("amount_tenths"), eb.lit(0)).as("sum"))
    .where("account_id", "=", accountId)
    .where("kind", "=", "charge")
    .executeTakeFirstOrThrow();
  return 0 - Number(row.sum);
}

/** The lead export history as GET /lead-export-history gives it: lead id -> export method. */
async function historyOf(auth: Auth): Promise<Map<number, string>> {
  const res = await t
    .request()
    .get("/api/v1/lead-export-history")
    .query({ limit: 200 })
    .set(auth)
    .expect(200);
  const entries = res.body.data as { leadId: number; exportMethod: string }[];
  return new Map(entries.map((e) => [e.leadId, e.exportMethod]));
}

const DAY = 24 * 60 * 60 * 1000;
/** A buying signal within the last 7 days (for `rel:7d`), after 2026-09-01. */
const recent = () => new Date(Date.now() - DAY);
/** A buying signal before 2026-09-01 and older than 7 days. */
const OLD = new Date("2026-08-15T12:00:00Z");

/** The leads every call runs on, by a short name. */
const LEADS: Record<string, LeadInput> = {
  // Dental, mostly Texas.
  brightSmile: {
    company_name: "Bright Smile Dental",
    registered_url: "https://brightsmiledental.com",
    city: "Austin",
    state: "TX",
    phone: "(512) 555-0101",
    email: "info@brightsmiledental.com",
    email_primary_mx: "google.com",
    buying_signal_type: ["Newly Added"],
    number_of_locations: 3,
    rating_value: 4.8,
    platform: "WordPress",
    website_schema_types: ["Dentist", "LocalBusiness"],
    founder_emails: ["ann@brightsmiledental.com"],
    founder_phones: ["(512) 555-0109"],
    redirect: false,
  },
  austinDentist: {
    company_name: "Austin Dentist Group",
    registered_url: null,
    city: "Round Rock",
    state: "TX",
    phone: "(737) 555-0102",
    email: null,
    buying_signal_type: ["Phone Primary"],
    number_of_locations: null,
    rating_value: 4.1,
    platform: "Wix",
    website_schema_types: ["LocalBusiness"],
    redirect: null,
  },
  hillCountryOrtho: {
    company_name: "Hill Country Orthodontics",
    registered_url: "https://hcortho.com",
    city: "Round Rock",
    state: "TX",
    phone: "(512) 555-0103",
    email: "hello@hcortho.com",
    email_primary_mx: "outlook.com",
    buying_signal_type: ["Email Primary"],
    number_of_locations: 1,
    rating_value: 4.6,
    platform: "Squarespace",
    website_schema_types: ["MedicalBusiness"],
    redirect: true,
  },
  tulsaDental: { company_name: "Dental Care of Tulsa", city: "Tulsa", state: "OK", phone: "(918) 555-0104" },
  miamiDental: { company_name: "Miami Dental Studio", city: "Miami", state: "FL", phone: "(305) 555-0105" },
  smileStudio: {
    company_name: "Smile Studio",
    description: "Clear orthodontic aligners for adults",
    city: "Dallas",
    state: "TX",
  },
  orthoPlus: {
    company_name: "Plus Clinic",
    registered_url: "https://orthoplus.com",
    city: "Dallas",
    state: "TX",
  },
  // Auto repair, Illinois.
  windyAuto: { company_name: "Windy City Auto Repair", city: "Chicago", state: "IL" },
  chicagoBody: { company_name: "Chicago Body Shop", city: "Chicago", state: "IL" },
  autoworks: { company_name: "Autoworks and Repair", city: "Springfield", state: "IL" },
  repairAuto: { company_name: "Repair Auto Center", city: "Chicago", state: "IL" },
  // Med spas, Florida.
  glowMedSpa: { company_name: "Glow Med Spa", city: "Tampa", state: "FL" },
  aesthetics: { company_name: "Aesthetics by Ana", city: "Orlando", state: "FL" },
  botoxBar: { company_name: "Botox Bar", city: "Atlanta", state: "GA" },
  // Pet grooming, California.
  pawsGrooming: { company_name: "Paws Pet Grooming", city: "San Diego", state: "CA" },
  dogBoarding: { company_name: "Dog Grooming and Boarding", city: "Fresno", state: "CA" },
  petKennel: { company_name: "Happy Pet Salon Kennel", city: "Oakland", state: "CA" },
  // Fitness.
  peachFitness: { company_name: "Peach Fitness", city: "Savannah", state: "GA" },
  tarHeelYoga: { company_name: "Tar Heel Yoga", city: "Durham", state: "NC" },
  loneStarGym: { company_name: "Lone Star Gym", city: "Houston", state: "TX" },
};

/** Leads whose buying signal is recent (within 7 days); the others' is OLD. */
const RECENT = new Set(["brightSmile", "austinDentist", "windyAuto", "repairAuto", "autoworks"]);

const ids: Record<string, number> = {};
const names = (...keys: string[]) => keys.map((k) => LEADS[k]!.company_name as string).sort();

beforeAll(async () => {
  for (const [key, lead] of Object.entries(LEADS)) {
    ids[key] = await buildLead(t.ctx.db, {
      registered_url: null,
      crawled_url: null,
      email: null,
      phone: null,
      description: null,
      ai_category_estimation: null,
      ...lead,
      last_buying_signal: RECENT.has(key) ? recent() : OLD,
    });
  }
});

const DENTAL = ["*dental*", "*dentist*", "*orthodont*"];

describe("SKILL.md's translation table, as smb_api.py sends it", () => {
  it("dental practices in Texas: JSON-array keywords with wildcards, stateInclude=TX", async () => {
    const { auth } = await buildAccount(t.ctx.db, { plan: "enterprise" });
    const res = await call(auth, "/leads", { positiveKeywords: DENTAL, stateInclude: "TX", maxCredits: 100 });
    // Smile Studio has "orthodontic" only in its description, which the default orColumns leave out.
    expect(namesOf(res)).toEqual(names("brightSmile", "austinDentist", "hillCountryOrtho"));
  });

  it("med spas in Florida: inner wildcards", async () => {
    const { auth } = await buildAccount(t.ctx.db, { plan: "enterprise" });
    const res = await call(auth, "/leads", {
      positiveKeywords: ["*med*spa*", "*medical*spa*", "*aesthet*", "*botox*", "*medspa*"],
      stateInclude: "FL",
      maxCredits: 100,
    });
    expect(namesOf(res)).toEqual(names("glowMedSpa", "aesthetics"));
  });

  it("auto repair shops in Chicago updated this week: cityInclude list and lastUpdatedFrom=rel:7d", async () => {
    const { auth } = await buildAccount(t.ctx.db, { plan: "enterprise" });
    const res = await call(auth, "/leads", {
      positiveKeywords: ["*auto*repair*", "*body*shop*", "*mechanic*", "*oil*change*", "*brake*"],
      cityInclude: ["Chicago"],
      lastUpdatedFrom: "rel:7d",
      maxCredits: 100,
    });
    // Chicago Body Shop's signal is older than 7 days; Repair Auto Center has the words the other way round.
    expect(namesOf(res)).toEqual(names("windyAuto"));
  });

  it("pet grooming in California without boarding: negativeKeywords", async () => {
    const { auth } = await buildAccount(t.ctx.db, { plan: "enterprise" });
    const res = await call(auth, "/leads", {
      positiveKeywords: ["*pet*groom*", "*dog*groom*", "*pet*salon*"],
      negativeKeywords: ["*boarding*", "*kennel*"],
      stateInclude: "CA",
      maxCredits: 100,
    });
    expect(namesOf(res)).toEqual(names("pawsGrooming"));
  });

  it("fitness studios in Georgia and North Carolina: stateInclude=GA,NC", async () => {
    const { auth } = await buildAccount(t.ctx.db, { plan: "enterprise" });
    const res = await call(auth, "/leads", {
      positiveKeywords: ["*fitness*", "*gym*", "*yoga*", "*pilates*", "*crossfit*"],
      stateInclude: "GA,NC",
      maxCredits: 100,
    });
    expect(namesOf(res)).toEqual(names("peachFitness", "tarHeelYoga"));
  });

  it("calls without a positive filter answer requiresKeywords and charge nothing", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db, { monthlyCredits: 50 });
    for (const params of [
      { limit: 50, minStars: 4 },
      { websiteSchemaFilter: "LocalBusiness" },
      { registrationDateFrom: "rel:6m" },
      // SKILL.md's "full-text search" example: `search` alone is not a positive filter.
      { search: "organic coffee", limit: "25" },
      { websiteSchemaFilter: "LocalBusiness", stateInclude: "CA", limit: "25" },
    ]) {
      for (const path of ["/leads", "/leads/preview"] as const) {
        const res = await call(auth, path, params);
        expect(res.body.data.leads).toEqual([]);
        expect(res.body.data.requiresKeywords).toBe(true);
        expect(res.body.data.message).toContain("positiveKeywords");
        expect(res.body.data.pagination.total).toBe(0);
      }
    }
    expect(await chargedTenths(accountId)).toBe(0);
    expect((await historyOf(auth)).size).toBe(0);
    expect(await creditsOf(auth)).toBe(50);
  });
});

describe("SKILL.md's smb_api.py examples (values given as strings)", () => {
  it("a JSON-array string keyword list and limit as text", async () => {
    const { auth } = await buildAccount(t.ctx.db, { plan: "enterprise" });
    const res = await call(auth, "/leads", {
      positiveKeywords: '["*med*spa*","*medical*spa*","*aesthet*","*botox*","*medspa*"]',
      stateInclude: "FL",
      limit: "25",
      maxCredits: "25",
    });
    expect(namesOf(res)).toEqual(names("glowMedSpa", "aesthetics"));
    expect(res.body.data.pagination).toMatchObject({ page: 1, limit: 25, total: 2 });
    expect(res.body.data.maxCredits).toBe(25);
  });

  it("credit controls: maxCredits=10 and maxResults=50 (echoed), then maxCredits=0 returns only leads already received", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db, { monthlyCredits: 100 });
    const first = await call(auth, "/leads", {
      positiveKeywords: '["*dental*"]',
      stateInclude: "TX",
      maxCredits: "1",
      maxResults: "50",
    });
    expect(leadsOf(first)).toHaveLength(1);
    expect(first.body.data).toMatchObject({
      creditsUsed: 1,
      creditsRemaining: 99,
      maxCredits: 1,
      maxResults: 50,
    });
    const bought = leadsOf(first)[0]!.id;
    const free = await call(auth, "/leads", {
      positiveKeywords: '["*dental*"]',
      stateInclude: "TX",
      maxCredits: "0",
    });
    expect(leadsOf(free).map((l) => l.id)).toEqual([bought]);
    expect(free.body.data).toMatchObject({ creditsUsed: 0, creditsRemaining: 99, maxCredits: 0 });
    expect(await chargedTenths(accountId)).toBe(10);
    expect(await creditsOf(auth)).toBe(99);
  });
});

describe("REFERENCE.md section 2 parameters", () => {
  it("lastBuyingSignalFrom=2026-09-01 (a date) and the old name lastUpdatedFrom (the new name wins)", async () => {
    const { auth } = await buildAccount(t.ctx.db, { plan: "enterprise" });
    const res = await call(auth, "/leads/preview", {
      positiveKeywords: DENTAL,
      stateInclude: "TX",
      lastBuyingSignalFrom: "2026-09-01",
    });
    expect(namesOf(res)).toEqual(names("brightSmile", "austinDentist"));
    const both = await call(auth, "/leads/preview", {
      positiveKeywords: DENTAL,
      stateInclude: "TX",
      lastUpdatedFrom: "2000-01-01",
      lastBuyingSignalFrom: "2026-09-01",
    });
    expect(namesOf(both)).toEqual(names("brightSmile", "austinDentist"));
  });

  it("buyingSignalTypeFilter=Newly Added,Phone Primary (comma-separated, exact) and updateReasonFilter", async () => {
    const { auth } = await buildAccount(t.ctx.db, { plan: "enterprise" });
    const res = await call(auth, "/leads/preview", {
      positiveKeywords: DENTAL,
      buyingSignalTypeFilter: ["Newly Added", "Phone Primary"],
    });
    expect(namesOf(res)).toEqual(names("brightSmile", "austinDentist"));
    const old = await call(auth, "/leads/preview", {
      positiveKeywords: DENTAL,
      updateReasonFilter: "Email Primary",
    });
    expect(namesOf(old)).toEqual(names("hillCountryOrtho"));
  });

  it("emailPrimaryEmptyFilter=exclude_empty", async () => {
    const { auth } = await buildAccount(t.ctx.db, { plan: "enterprise" });
    const res = await call(auth, "/leads/preview", {
      positiveKeywords: DENTAL,
      stateInclude: "TX",
      emailPrimaryEmptyFilter: "exclude_empty",
    });
    expect(namesOf(res)).toEqual(names("brightSmile", "hillCountryOrtho"));
  });

  it('contact items: phonePrimaryInclude=[{"v":"(512)","m":"starts"}]', async () => {
    const { auth } = await buildAccount(t.ctx.db, { plan: "enterprise" });
    const res = await call(auth, "/leads/preview", {
      positiveKeywords: DENTAL,
      phonePrimaryInclude: [{ v: "(512)", m: "starts" }],
    });
    expect(namesOf(res)).toEqual(names("brightSmile", "hillCountryOrtho"));
    const ends = await call(auth, "/leads/preview", {
      positiveKeywords: DENTAL,
      phonePrimaryInclude: [{ v: "0104", m: "ends" }],
    });
    expect(namesOf(ends)).toEqual(names("tulsaDental"));
  });

  it('orColumns=["wCompanyName","wProfileDescriptionShort"]: keywords over the name and the short description only', async () => {
    const { auth } = await buildAccount(t.ctx.db, { plan: "enterprise" });
    const res = await call(auth, "/leads/preview", {
      positiveKeywords: ["*ortho*"],
      orColumns: ["wCompanyName", "wProfileDescriptionShort"],
    });
    // Plus Clinic has "ortho" only in its registered URL.
    expect(namesOf(res)).toEqual(names("hillCountryOrtho", "smileStudio"));
    const byDefault = await call(auth, "/leads/preview", { positiveKeywords: ["*ortho*"] });
    expect(namesOf(byDefault)).toEqual(names("hillCountryOrtho", "orthoPlus"));
  });

  it("sortBy=wCompanyName with sortOrder=asc", async () => {
    const { auth } = await buildAccount(t.ctx.db, { plan: "enterprise" });
    const res = await call(auth, "/leads/preview", {
      positiveKeywords: DENTAL,
      stateInclude: "TX",
      sortBy: "wCompanyName",
      sortOrder: "asc",
    });
    expect(leadsOf(res).map((l) => l.companyName)).toEqual(
      names("brightSmile", "austinDentist", "hillCountryOrtho"),
    );
  });

  it("search: a plain substring of the name, URLs, description, city or primary phone, narrowing the keywords", async () => {
    const { auth } = await buildAccount(t.ctx.db, { plan: "enterprise" });
    const res = await call(auth, "/leads/preview", { positiveKeywords: DENTAL, search: "austin" });
    // Bright Smile is in Austin; Austin Dentist Group has it in its name.
    expect(namesOf(res)).toEqual(names("brightSmile", "austinDentist"));
    const phone = await call(auth, "/leads/preview", { positiveKeywords: DENTAL, search: "555-0103" });
    expect(namesOf(phone)).toEqual(names("hillCountryOrtho"));
  });

  it("company-detail filters: minNumLocations, minRatingValue, emailPrimaryMxValues, platformInclude, redirectFilter, websiteSchemaFilter", async () => {
    const { auth } = await buildAccount(t.ctx.db, { plan: "enterprise" });
    const preview = async (params: Params) =>
      namesOf(
        await call(auth, "/leads/preview", { positiveKeywords: DENTAL, stateInclude: "TX", ...params }),
      );
    expect(await preview({ minNumLocations: 2 })).toEqual(names("brightSmile"));
    expect(await preview({ minRatingValue: 4.5 })).toEqual(names("brightSmile", "hillCountryOrtho"));
    expect(await preview({ emailPrimaryMxValues: ["google.com", "outlook.com"] })).toEqual(
      names("brightSmile", "hillCountryOrtho"),
    );
    expect(await preview({ platformInclude: ["wordpress", "wix"] })).toEqual(
      names("brightSmile", "austinDentist"),
    );
    expect(await preview({ redirectFilter: "yes" })).toEqual(names("hillCountryOrtho"));
    // `no` also keeps leads without a value.
    expect(await preview({ redirectFilter: "no" })).toEqual(names("brightSmile", "austinDentist"));
    expect(await preview({ websiteSchemaFilter: "Dentist" })).toEqual(names("brightSmile"));
    expect(await preview({ websiteSchemaFilter: "Dentist,MedicalBusiness" })).toEqual(
      names("brightSmile", "hillCountryOrtho"),
    );
  });
});

describe("a client session: preview, buy with maxCredits, excludePurchased, maxResults", () => {
  it("charges exactly the new leads returned, records them, and masks only leads not received", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db, { monthlyCredits: 20 });
    const other = await buildAccount(t.ctx.db, { monthlyCredits: 20 });
    // Another account's history never counts for this one.
    await markReceived(t.ctx.db, other.accountId, [ids.brightSmile!, ids.hillCountryOrtho!]);
    const search = { positiveKeywords: ["*dental*", "*dentist*"], stateInclude: ["TX"], limit: 25 };

    // smb_api.py's docstring example: a free preview first.
    const preview = await call(auth, "/leads/preview", search);
    expect(namesOf(preview)).toEqual(names("brightSmile", "austinDentist"));
    expect(preview.body.data).toMatchObject({
      preview: true,
      databaseType: "other",
      pagination: { page: 1, limit: 25, total: 2, pages: 1 },
      summary: { totalMatches: 2, newLeads: 2, alreadyReceived: 0, exportCost: 2, creditsRemaining: 20 },
    });
    const masked = leadsOf(preview).find((l) => l.id === ids.brightSmile)!;
    expect(masked).toMatchObject({
      contactExported: false,
      phone: "(512) ***-**01",
      email: "inf*@brightsmiledental.com",
      founderEmails: ["an*@brightsmiledental.com"],
      founderPhones: ["(512) ***-**09"],
    });
    expect(preview.body.data.creditsUsed).toBeUndefined();

    // Buy one: smb_api.py's example with maxCredits.
    const bought = await call(auth, "/leads", { ...search, maxCredits: 1 });
    expect(leadsOf(bought)).toHaveLength(1);
    const boughtLead = leadsOf(bought)[0]!;
    expect(bought.body.data).toMatchObject({ creditsUsed: 1, creditsRemaining: 19, maxCredits: 1 });
    expect(bought.body.data.maxResults).toBeUndefined();
    expect(boughtLead.phone).not.toContain("*");
    expect(await historyOf(auth)).toEqual(new Map([[boughtLead.id, "api"]]));

    // The preview now shows it unmasked, contactExported; excludePurchased leaves it out.
    const again = await call(auth, "/leads/preview", search);
    const owned = leadsOf(again).find((l) => l.id === boughtLead.id)!;
    expect(owned.contactExported).toBe(true);
    expect(owned.phone).toBe(boughtLead.phone);
    expect(again.body.data.summary).toMatchObject({ newLeads: 1, alreadyReceived: 1 });
    const fresh = await call(auth, "/leads/preview", { ...search, excludePurchased: true });
    expect(leadsOf(fresh).map((l) => l.id)).not.toContain(boughtLead.id);
    expect(fresh.body.data.pagination.total).toBe(1);
    expect(leadsOf(fresh).every((l) => l.contactExported === false)).toBe(true);

    // maxCredits=5, maxResults=3 over every dental lead: new leads first, the page cut to 3.
    const capped = await call(auth, "/leads", { positiveKeywords: DENTAL, maxCredits: 5, maxResults: 3 });
    const returned = leadsOf(capped);
    expect(returned).toHaveLength(3);
    expect(returned.every((l) => l.id !== boughtLead.id)).toBe(true);
    expect(capped.body.data).toMatchObject({
      creditsUsed: 3,
      creditsRemaining: 16,
      maxCredits: 5,
      maxResults: 3,
    });
    expect(await chargedTenths(accountId)).toBe(40);
    expect(await creditsOf(auth)).toBe(16);
    const history = await historyOf(auth);
    expect([...history.keys()].sort()).toEqual([boughtLead.id, ...returned.map((l) => l.id)].sort());
    expect([...history.values()].every((method) => method === "api")).toBe(true);

    // The other account is untouched.
    expect(await chargedTenths(other.accountId)).toBe(0);
  });

  it("the real service's invalid cost controls are refused here, with details, before anything is charged", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db, { monthlyCredits: 20 });
    for (const query of [
      "maxCredits=-1",
      "maxCredits=2.5",
      "maxCredits=ten",
      "maxCredits=1&maxCredits=2",
      "maxResults=0",
      "limit=0",
      "limit=5&limit=6",
    ]) {
      const res = await t
        .request()
        .get(`/api/v1/leads?positiveKeywords=${encodeURIComponent('["*dental*"]')}&${query}`)
        .set(auth);
      expect(res.status, query).toBe(400);
      expect(res.body.error).toBe("validation_error");
      expect(res.body.details.length).toBeGreaterThan(0);
    }
    expect(await chargedTenths(accountId)).toBe(0);
  });
});
