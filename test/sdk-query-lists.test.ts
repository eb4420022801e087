import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import createClient from "openapi-fetch";
import type { paths } from "../generated/api.js";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLeads, uniqueWord } from "./helpers/leads-factories.js";

// Every list query parameter is accepted comma-separated (`a=x,y`, as the contract declares) and
// repeated (`a=x&a=y`, as openapi-fetch and most HTTP clients send arrays), with identical results.
const t = useTestApp();

interface Parameter {
  name: string;
  in: string;
  schema?: { type?: string };
  $ref?: string;
}
const doc = parse(readFileSync(new URL("../openapi.yaml", import.meta.url), "utf8")) as {
  paths: Record<string, Record<string, { operationId: string; parameters?: Parameter[] }>>;
  components: { parameters?: Record<string, Parameter> };
};
/** The list query parameters of every GET operation of the contract, by path. */
const listParameters: { path: string; operationId: string; name: string }[] = [];
for (const [path, item] of Object.entries(doc.paths)) {
  const op = item.get;
  if (!op) continue;
  for (const p of op.parameters ?? []) {
    const param = p.$ref ? doc.components.parameters![p.$ref.split("/").pop()!]! : p;
    if (param.in === "query" && param.schema?.type === "array") {
      listParameters.push({ path, operationId: op.operationId, name: param.name });
    }
  }
}

/** A value each list parameter accepts (two items), and a positive filter to go with it. */
function valuesOf(name: string, word: string): [string, string] {
  if (name === "orColumns") return ["companyName", "city"];
  if (name.startsWith("state")) return ["TX", "CA"];
  if (name.startsWith("zip")) return ["78701", "94105"];
  if (name === "buyingSignalTypeFilter" || name === "updateReasonFilter") return ["Newly Added", "Instagram"];
  return [`${word}a`, `${word}b`];
}

describe("list query parameters: comma-separated and repeated forms", () => {
  it("the contract's list parameters are the lead search ones, on search and preview", () => {
    expect(new Set(listParameters.map((p) => p.operationId))).toEqual(
      new Set(["searchLeads", "previewLeads"]),
    );
    expect(listParameters.length).toBeGreaterThanOrEqual(2 * 102);
  });

  it("search: two keywords match the same leads in both forms", async () => {
    const { auth } = await buildAccount(t.ctx.db, { monthlyCredits: 100 });
    const word = uniqueWord();
    await buildLeads(t.ctx.db, 3, (i) => ({
      company_name: `${word}${["a", "b", "c"][i]} Roofing`,
      state: ["TX", "CA", "TX"][i],
    }));
    const comma = await t
      .request()
      .get(`/api/v1/leads?positiveKeywords=${word}a,${word}b&stateInclude=TX,CA&sortBy=id&sortOrder=asc`)
      .set(auth)
      .expect(200);
    const repeated = await t
      .request()
      .get(
        `/api/v1/leads?positiveKeywords=${word}a&positiveKeywords=${word}b&stateInclude=TX&stateInclude=CA&sortBy=id&sortOrder=asc`,
      )
      .set(auth)
      .expect(200);
    const names = (body: { data: { leads: { companyName: string }[] } }) =>
      body.data.leads.map((l) => l.companyName);
    expect(names(comma.body)).toEqual([`${word}a Roofing`, `${word}b Roofing`]);
    expect(names(repeated.body)).toEqual(names(comma.body));
    // The second request charged nothing: the same leads, already received.
    expect(repeated.body.data.creditsUsed).toBe(0);
  });

  it("every list parameter of preview answers the same in both forms", async () => {
    const { auth } = await buildAccount(t.ctx.db, { monthlyCredits: 100 });
    const word = uniqueWord();
    await buildLeads(t.ctx.db, 4, (i) => ({
      company_name: `${word}${i % 2 === 0 ? "a" : "b"} Plumbing ${i}`,
      description: `${word}a ${word}b`,
      city: `${word}a`,
      street: `${word}b street`,
      state: i < 2 ? "TX" : "CA",
      zip: i < 2 ? "78701" : "94105",
      registered_url: `https://${word}a.example.com`,
    }));
    for (const { name } of listParameters.filter((p) => p.operationId === "previewLeads")) {
      const [x, y] = valuesOf(name, word);
      const base = name === "positiveKeywords" ? "" : `positiveKeywords=${word}a,${word}b&`;
      const comma = await t
        .request()
        .get(`/api/v1/leads/preview?${base}${name}=${x},${y}&sortBy=id`)
        .set(auth);
      const repeated = await t
        .request()
        .get(`/api/v1/leads/preview?${base}${name}=${x}&${name}=${y}&sortBy=id`)
        .set(auth);
      expect(comma.status, `${name}: ${JSON.stringify(comma.body)}`).toBe(200);
      expect(repeated.status, name).toBe(comma.status);
      expect(repeated.body, name).toEqual(comma.body);
    }
  });

  it("a repeated parameter may mix both forms and JSON array strings", async () => {
    const { auth } = await buildAccount(t.ctx.db, { monthlyCredits: 100 });
    const word = uniqueWord();
    await buildLeads(t.ctx.db, 3, (i) => ({ company_name: `${word}${["a", "b", "c"][i]} Co` }));
    const all = await t
      .request()
      .get(`/api/v1/leads/preview?positiveKeywords=${word}a,${word}b,${word}c`)
      .set(auth)
      .expect(200);
    const mixed = await t
      .request()
      .get(
        `/api/v1/leads/preview?positiveKeywords=${word}a,${word}b&positiveKeywords=${encodeURIComponent(`["${word}c"]`)}`,
      )
      .set(auth)
      .expect(200);
    expect(all.body.data.summary.totalMatches).toBe(3);
    expect(mixed.body).toEqual(all.body);
  });
});

describe("term-item lists from a generated client", () => {
  it("openapi-fetch sends object items written as JSON text, one per array item", async () => {
    const { apiKey, auth } = await buildAccount(t.ctx.db, { monthlyCredits: 100 });
    const word = uniqueWord();
    const [starts, ends] = await buildLeads(t.ctx.db, 3, (i) => ({
      company_name: `${word} ${i}`,
      phone: ["+1 512 555 0100", "(737) 555-0142", "(737) 555-0100"][i],
    }));
    const server = t.app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });
      const { data, error } = await client.GET("/api/v1/leads/preview", {
        params: {
          query: {
            positiveKeywords: [word],
            phonePrimaryInclude: [
              JSON.stringify({ v: "(512)", m: "starts" }),
              JSON.stringify({ v: "0142", m: "ends" }),
            ],
            sortBy: "id",
            sortOrder: "asc",
          },
        },
      });
      expect(error).toBeUndefined();
      expect(data?.data.leads.map((l) => l.id)).toEqual([starts, ends]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    // The same list as one JSON array string, as the real service's clients send it.
    const res = await t
      .request()
      .get("/api/v1/leads/preview")
      .query({
        positiveKeywords: word,
        phonePrimaryInclude: JSON.stringify([
          { v: "(512)", m: "starts" },
          { v: "0142", m: "ends" },
        ]),
        sortBy: "id",
        sortOrder: "asc",
      })
      .set(auth)
      .expect(200);
    expect(res.body.data.leads.map((l: { id: number }) => l.id)).toEqual([starts, ends]);
  });
});
