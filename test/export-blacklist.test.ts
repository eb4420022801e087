import { describe, expect, it } from "vitest";
import { normalizeDomain } from "../src/export-blacklist/domain.js";
import { blacklistedDomains, isBlacklisted, isLeadBlacklisted } from "../src/export-blacklist/match.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { expectKeyAndPlanRequired } from "./helpers/lead-records-factories.js";

const t = useTestApp();

type Auth = { Authorization: string };
const domain = (value: string) => ({ entryType: "domain", value });

async function entriesOf(auth: Auth) {
  const res = await t.request().get("/api/v1/export-blacklist").set(auth).expect(200);
  return res.body.data as { id: number; entryType: string; value: string; createdAt: string }[];
}

async function add(auth: Auth, values: string[]) {
  const res = await t
    .request()
    .post("/api/v1/export-blacklist")
    .set(auth)
    .send({ entries: values.map(domain) })
    .expect(201);
  return res.body.data as { added: { id: number; value: string }[]; skipped: number };
}

describe("domain normalisation", () => {
  it.each([
    ["https://www.Example.com/about?x=1#top", "example.com"],
    ["EXAMPLE.com:8080", "example.com"],
    ["http://user:pw@shop.example.co.uk/path", "shop.example.co.uk"],
    ["  example.org.  ", "example.org"],
    ["//cdn.example.net/x", "cdn.example.net"],
    ["*.example.io", "example.io"],
    ["www.www.example.com", "www.example.com"],
    ["bücher.de", "xn--bcher-kva.de"],
  ])("%s -> %s", (input, expected) => {
    expect(normalizeDomain(input)).toBe(expected);
  });

  it.each(["", "   ", "localhost", "1.2.3.4", "exa mple.com", "-bad.com", "a..b.com", "http://", "[::1]"])(
    "%j is not a domain",
    (input) => {
      expect(normalizeDomain(input)).toBeUndefined();
    },
  );
});

describe("blacklist matching", () => {
  const domains = new Set(["example.com", "shop.other.org"]);

  it("matches the domain and its subdomains, whatever the URL's form", () => {
    for (const url of [
      "example.com",
      "https://www.example.com/contact",
      "http://EXAMPLE.COM:80",
      "https://blog.example.com",
      "deep.sub.example.com/x",
      "https://shop.other.org",
      "https://a.shop.other.org/",
      "https://my_shop.example.com/",
      "https://BÜCHER.example.com",
    ]) {
      expect(isBlacklisted(domains, url), url).toBe(true);
    }
  });

  it("does not match other domains, parents of a listed subdomain, or missing URLs", () => {
    for (const url of [
      "notexample.com",
      "example.com.au",
      "other.org",
      "https://other.org/shop",
      "",
      null,
      undefined,
      "::",
    ]) {
      expect(isBlacklisted(domains, url), String(url)).toBe(false);
    }
  });

  it("checks every URL of a lead", () => {
    expect(
      isLeadBlacklisted(domains, {
        registeredUrl: "https://fine.com",
        crawledUrl: "https://www.example.com/x",
      }),
    ).toBe(true);
    expect(isLeadBlacklisted(domains, { website: "https://blog.example.com" })).toBe(true);
    expect(isLeadBlacklisted(domains, { website: null, registeredUrl: "fine.com", crawledUrl: null })).toBe(
      false,
    );
  });

  it("loads an account's domains (and only its own) from the database", async () => {
    const owner = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    await add(owner.auth, ["https://www.Blocked.com/about"]);
    await add(other.auth, ["elsewhere.com"]);
    const loaded = await blacklistedDomains(t.ctx.db, owner.accountId);
    expect([...loaded]).toEqual(["blocked.com"]);
    expect(isBlacklisted(loaded, "https://mail.blocked.com")).toBe(true);
    expect(isBlacklisted(loaded, "https://elsewhere.com")).toBe(false);
  });
});

describe("POST /export-blacklist", () => {
  it("adds normalised domains in the order sent and answers 201 with them", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .post("/api/v1/export-blacklist")
      .set(auth)
      .send({
        entries: [domain("https://www.Zeta.com/a"), domain("alpha.com"), domain("Mid.example.org:443")],
      })
      .expect(201);
    expect(res.body.data.skipped).toBe(0);
    expect(res.body.data.added).toEqual([
      { id: expect.any(Number), entryType: "domain", value: "zeta.com", createdAt: expect.any(String) },
      { id: expect.any(Number), entryType: "domain", value: "alpha.com", createdAt: expect.any(String) },
      {
        id: expect.any(Number),
        entryType: "domain",
        value: "mid.example.org",
        createdAt: expect.any(String),
      },
    ]);
    expect((await entriesOf(auth)).map((e) => e.value).sort()).toEqual([
      "alpha.com",
      "mid.example.org",
      "zeta.com",
    ]);
  });

  it("does not repeat a domain: repeats in the request and already listed domains are skipped", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    await add(auth, ["listed.com"]);
    const result = await add(auth, [
      "new.com",
      "https://www.NEW.com/x",
      "listed.com",
      "http://listed.com/",
      "new.com",
    ]);
    expect(result.added.map((e) => e.value)).toEqual(["new.com"]);
    expect(result.skipped).toBe(4);
    const again = await add(auth, ["listed.com", "new.com"]);
    expect(again).toEqual({ added: [], skipped: 2 });
    expect((await entriesOf(auth)).map((e) => e.value).sort()).toEqual(["listed.com", "new.com"]);
  });

  it("two accounts may list the same domain", async () => {
    const a = await buildAccount(t.ctx.db);
    const b = await buildAccount(t.ctx.db);
    expect((await add(a.auth, ["shared.com"])).added).toHaveLength(1);
    expect((await add(b.auth, ["shared.com"])).added).toHaveLength(1);
  });

  it("never stores a domain twice under concurrent requests", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        t
          .request()
          .post("/api/v1/export-blacklist")
          .set(auth)
          .send({ entries: [domain("race.com"), domain("b.race.com")] }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(201));
    const added = results.flatMap((r) => (r.body.data.added as { value: string }[]).map((e) => e.value));
    expect(added.sort()).toEqual(["b.race.com", "race.com"]);
    expect(results.reduce((sum, r) => sum + (r.body.data.skipped as number), 0)).toBe(10);
    expect(await entriesOf(auth)).toHaveLength(2);
  });

  it("adds a large batch in one request", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const values = Array.from({ length: 2500 }, (_, i) => `site-${i}.com`);
    const result = await add(auth, [...values, "site-7.com"]);
    expect(result.added).toHaveLength(2500);
    expect(result.added[2499]?.value).toBe("site-2499.com");
    expect(result.skipped).toBe(1);
  });

  it("refuses a value that is not a domain with 400 validation_error naming the entry, adding nothing", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .post("/api/v1/export-blacklist")
      .set(auth)
      .send({ entries: [domain("good.com"), domain("not a domain"), domain("localhost")] })
      .expect(400);
    expect(res.body.error).toBe("validation_error");
    expect(res.body.details).toEqual([
      { path: ["body", "entries", "1", "value"], message: expect.any(String) },
      { path: ["body", "entries", "2", "value"], message: expect.any(String) },
    ]);
    expect(await entriesOf(auth)).toEqual([]);
  });

  it("adds a single entry sent as {value, entryType}, answering the same shape", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .post("/api/v1/export-blacklist")
      .set(auth)
      .send({ value: "https://www.Example.com/about", entryType: "domain" })
      .expect(201);
    expect(res.body.data).toEqual({
      added: [
        { id: expect.any(Number), entryType: "domain", value: "example.com", createdAt: expect.any(String) },
      ],
      skipped: 0,
    });
    const again = await t
      .request()
      .post("/api/v1/export-blacklist")
      .set(auth)
      .send({ value: "example.com", entryType: "domain" })
      .expect(201);
    expect(again.body.data).toEqual({ added: [], skipped: 1 });
    expect((await entriesOf(auth)).map((e) => e.value)).toEqual(["example.com"]);
  });

  it.each([
    ["both forms", { entries: [domain("a.com")], value: "b.com", entryType: "domain" }, ["body"]],
    ["entries with a lone entryType", { entries: [domain("a.com")], entryType: "domain" }, ["body"]],
    ["a value without its entryType", { value: "example.com" }, ["body", "entryType"]],
    ["an entryType without a value", { entryType: "domain" }, ["body", "value"]],
    ["a single value that is not a domain", { value: "localhost", entryType: "domain" }, ["body", "value"]],
    ["a single empty value", { value: "", entryType: "domain" }, ["body", "value"]],
    ["a single unknown entryType", { value: "a@b.com", entryType: "email" }, ["body", "entryType"]],
    ["no entries member", {}, ["body", "entries"]],
  ])("refuses %s with 400 validation_error and details, adding nothing", async (_label, body, path) => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t.request().post("/api/v1/export-blacklist").set(auth).send(body).expect(400);
    expect(res.body.error).toBe("validation_error");
    expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    expect(await entriesOf(auth)).toEqual([]);
  });

  it.each([
    ["no entries member", {}],
    ["an empty entries array", { entries: [] }],
    ["an unknown entryType", { entries: [{ entryType: "email", value: "a@b.com" }] }],
    ["a missing value", { entries: [{ entryType: "domain" }] }],
    ["an empty value", { entries: [{ entryType: "domain", value: "" }] }],
    ["a value that is not a string", { entries: [{ entryType: "domain", value: 42 }] }],
    ["a value over 2,048 characters", { entries: [domain(`${"a".repeat(2050)}.com`)] }],
    ["entries that are not objects", { entries: ["example.com"] }],
  ])("refuses %s with 400 validation_error, adding nothing", async (_label, body) => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t.request().post("/api/v1/export-blacklist").set(auth).send(body).expect(400);
    expect(res.body.error).toBe("validation_error");
    expect(res.body.details).toEqual(expect.any(Array));
    expect(await entriesOf(auth)).toEqual([]);
  });
});

describe("GET /export-blacklist", () => {
  it("lists the account's entries newest first and never another account's", async () => {
    const owner = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    await add(owner.auth, ["first.com"]);
    await add(owner.auth, ["second.com"]);
    await add(other.auth, ["theirs.com"]);
    const entries = await entriesOf(owner.auth);
    expect(entries.map((e) => e.value)).toEqual(["second.com", "first.com"]);
    expect(entries[0]).toEqual({
      id: expect.any(Number),
      entryType: "domain",
      value: "second.com",
      createdAt: expect.any(String),
    });
    expect((await entriesOf(other.auth)).map((e) => e.value)).toEqual(["theirs.com"]);
  });
});

describe("DELETE /export-blacklist/{id}", () => {
  it("removes the entry, after which the domain can be added again", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const { added } = await add(auth, ["gone.com", "kept.com"]);
    const gone = added.find((e) => e.value === "gone.com");
    const res = await t.request().delete(`/api/v1/export-blacklist/${gone?.id}`).set(auth).expect(200);
    expect(res.body.data.message).toEqual(expect.any(String));
    expect((await entriesOf(auth)).map((e) => e.value)).toEqual(["kept.com"]);
    await t.request().delete(`/api/v1/export-blacklist/${gone?.id}`).set(auth).expect(404);
    expect((await add(auth, ["gone.com"])).added).toHaveLength(1);
  });

  it("answers 404 for another account's entry and keeps it", async () => {
    const owner = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const { added } = await add(owner.auth, ["mine.com"]);
    const res = await t
      .request()
      .delete(`/api/v1/export-blacklist/${added[0]?.id}`)
      .set(other.auth)
      .expect(404);
    expect(res.body.error).toBe("not_found");
    expect(await entriesOf(owner.auth)).toHaveLength(1);
  });

  it("refuses an id that is not an integer with 400", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t.request().delete("/api/v1/export-blacklist/x1").set(auth).expect(400);
    expect(res.body.error).toBe("validation_error");
  });
});

describe("keys and plans", () => {
  it("needs a valid, unrevoked key of an account with a paid plan", async () => {
    const owner = await buildAccount(t.ctx.db);
    const { added } = await add(owner.auth, ["protected.com"]);
    await expectKeyAndPlanRequired(t, [
      { method: "get", path: "/api/v1/export-blacklist" },
      { method: "post", path: "/api/v1/export-blacklist", body: { entries: [domain("x.com")] } },
      { method: "delete", path: `/api/v1/export-blacklist/${added[0]?.id}` },
    ]);
    expect((await entriesOf(owner.auth)).map((e) => e.value)).toEqual(["protected.com"]);
  });
});
