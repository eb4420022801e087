import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { processRunSlice, runContext } from "../src/enrichments/worker/task.js";
import { closePageAgent, Outbound } from "../src/outbound/index.js";
import { buildLead, uniqueWord } from "./helpers/leads-factories.js";
import { pyJsonDumps, pyUrlencode } from "./helpers/python-encoding.js";
import { buy, useBillingApp, type Bought } from "./helpers/stripe-server.js";

// The saved inputs of the real service's documentation (REFERENCE.md sections 8-11, 13, 14 and
// SKILL.md) replayed as `smb_api.py` sends them: bodies are JSON objects sent as given (the
// script rewrites only export bodies), Python's json.dumps and urlencode for the hash. Every
// answer is also checked against openapi.yaml (test/setup.ts fails a test on any mismatch).

const b = useBillingApp();
const outbound = new Outbound({ allowPrivate: false });
afterAll(async () => {
  await closePageAgent(outbound);
  outbound.close();
});

const call = (bought: Bought, method: "get" | "post" | "put" | "patch", path: string, body?: object) => {
  const req = b.t.request()[method](`/api/v1${path}`).set(bought.auth);
  return body === undefined ? req : req.send(body);
};

describe("REFERENCE.md section 9: filter presets", () => {
  it('creates the "TX dentists" preset from its Python example and reads the hash back', async () => {
    const bought = await buy(b, { plan: "growth", trial: false });
    const hash = "#" + pyUrlencode({ ni: pyJsonDumps(["*dental*", "*dentist*"]), si: "TX,OK" });
    const created = await call(bought, "post", "/filter-presets", { name: "TX dentists", filters: { hash } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data).toEqual({
      id: expect.any(Number),
      name: "TX dentists",
      filters: { hash },
      createdAt: expect.any(String),
    });
    const listed = await call(bought, "get", "/filter-presets").expect(200);
    expect(listed.body.data).toEqual([created.body.data]);
  });

  it("reproduces a positiveKeywords search with a positive keyword list in nkl (leading # optional)", async () => {
    const bought = await buy(b, { plan: "growth", trial: false });
    const list = await call(bought, "post", "/keyword-lists", {
      name: "Dentists",
      type: "positive",
      keywords: ["*dental*", "*dentist*"],
      sourceCategories: ["Dentists"],
    }).expect(201);
    const hash = pyUrlencode({ nkl: String(list.body.data.id), si: "TX" });
    const created = await call(bought, "post", "/filter-presets", { name: "TX dentists", filters: { hash } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data.filters).toEqual({ hash });
  });

  it('takes search parameters with stateInclude "NY", comma strings and JSON-array strings', async () => {
    const bought = await buy(b, { plan: "growth", trial: false });
    const ny = await call(bought, "post", "/filter-presets", {
      name: "NY dentists",
      filters: { positiveKeywords: ["*dental*"], stateInclude: "NY" },
    });
    expect(ny.status, JSON.stringify(ny.body)).toBe(201);
    expect(ny.body.data.filters).toMatchObject({ positiveKeywords: ["*dental*"], stateInclude: ["NY"] });
    const text = await call(bought, "post", "/filter-presets", {
      name: "Southeast",
      filters: { positiveKeywords: pyJsonDumps(["*med*spa*"]), stateInclude: "FL,GA" },
    });
    expect(text.status, JSON.stringify(text.body)).toBe(201);
    expect(text.body.data.filters).toMatchObject({
      positiveKeywords: ["*med*spa*"],
      stateInclude: ["FL", "GA"],
    });
  });
});

describe("REFERENCE.md section 8: export blacklist", () => {
  it("adds a single entry and a batch", async () => {
    const bought = await buy(b, { plan: "growth", trial: false });
    const single = await call(bought, "post", "/export-blacklist", {
      value: "example.com",
      entryType: "domain",
    });
    expect(single.status, JSON.stringify(single.body)).toBe(201);
    expect(single.body.data.added).toEqual([
      expect.objectContaining({ entryType: "domain", value: "example.com" }),
    ]);
    const batch = await call(bought, "post", "/export-blacklist", {
      entries: [
        { value: "example.org", entryType: "domain" },
        { value: "example.net", entryType: "domain" },
      ],
    });
    expect(batch.status, JSON.stringify(batch.body)).toBe(201);
    const listed = await call(bought, "get", "/export-blacklist").expect(200);
    expect(listed.body.data.map((e: { value: string }) => e.value).sort()).toEqual([
      "example.com",
      "example.net",
      "example.org",
    ]);
  });
});

describe("REFERENCE.md section 10: keyword lists", () => {
  it("PUT /keyword-lists/{id} with only keywords changes only them", async () => {
    const bought = await buy(b, { plan: "growth", trial: false });
    const list = await call(bought, "post", "/keyword-lists", {
      name: "Dentists",
      type: "positive",
      keywords: ["*dental*"],
      sourceCategories: ["Dentists"],
    }).expect(201);
    const res = await call(bought, "put", `/keyword-lists/${list.body.data.id}`, {
      keywords: ["*dental*", "*orthodont*"],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({
      ...list.body.data,
      keywords: ["*dental*", "*orthodont*"],
    });
  });
});

describe("REFERENCE.md section 14: overage budget", () => {
  it('PATCH {"enabled": true, ...} sets the budget and {"enabled": false} turns it off', async () => {
    const bought = await buy(b, { plan: "growth", trial: false });
    const on = await call(bought, "patch", "/overage-budget", {
      enabled: true,
      budgetType: "dollars",
      budgetAmount: 50,
    });
    expect(on.status, JSON.stringify(on.body)).toBe(200);
    expect(on.body.data).toMatchObject({ enabled: true, budgetType: "dollars", budgetAmount: 50 });
    const off = await call(bought, "patch", "/overage-budget", { enabled: false });
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    expect(off.body.data).toMatchObject({ enabled: false, budgetAmount: null });
    expect((await call(bought, "get", "/overage-budget").expect(200)).body.data.enabled).toBe(false);
  });
});

describe("REFERENCE.md section 13: the enrichment download link", () => {
  it("answers {downloadUrl, expiresInSeconds: 300}, a link that works without the API key", async () => {
    const bought = await buy(b, { plan: "growth", trial: false });
    const host = `${uniqueWord("enr")}.test`;
    await buildLead(b.t.ctx.db, { registered_url: `https://${host}`, company_name: "Matched Co" });
    const submitted = await call(bought, "post", "/enrichments", {
      urls: [`https://${host}/`],
      maxCredits: 5,
    });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
    const id = submitted.body.data.id as number;
    const ctx = runContext({
      db: b.t.ctx.db,
      storage: b.t.ctx.storage,
      outbound,
      signingSecret: b.t.ctx.signingSecret,
      publicBaseUrl: b.t.ctx.config.publicBaseUrl,
      logger: pino({ level: "silent" }),
      settings: { politenessDelayMs: 0, sliceMs: 20_000 },
    });
    for (let slice = 0; slice < 20 && (await processRunSlice(ctx, id)) !== "finished"; slice += 1);
    const res = await call(bought, "get", `/enrichments/${id}/download`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ downloadUrl: expect.any(String), expiresInSeconds: 300 });
    const file = await b.t.request().get(new URL(res.body.data.downloadUrl as string).pathname);
    expect(file.status).toBe(200);
    expect(String(file.text)).toContain("Matched Co");
  });
});
