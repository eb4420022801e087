import { describe, expect, it } from "vitest";
import { maskEmail, maskPhone } from "../src/leads/presenter.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLeads, markReceived, uniqueWord } from "./helpers/leads-factories.js";

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

  it("needs a positive filter, a valid key and a paid plan", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .get("/api/v1/leads/preview")
      .query({ negativeKeywords: "x" })
      .set(auth)
      .expect(400);
    expect(res.body.error).toBe("validation_error");
    await t.request().get("/api/v1/leads/preview").query({ positiveKeywords: "x" }).expect(401);
    const canceled = await buildAccount(t.ctx.db, { status: "canceled" });
    await t
      .request()
      .get("/api/v1/leads/preview")
      .query({ positiveKeywords: "x" })
      .set(canceled.auth)
      .expect(403);
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
