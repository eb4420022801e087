import { describe, expect, it } from "vitest";
import { ApiError } from "../src/http/errors.js";
import { parseDateBound } from "../src/leads/search/dates.js";
import { phoneTermDigits } from "../src/leads/search/field-conditions.js";
import { hasPositiveFilter, parseSearchFilters, searchFiltersToJson } from "../src/leads/search/filters.js";
import { termParts } from "../src/leads/search/patterns.js";

function problems(fn: () => unknown): { path: string[]; message: string }[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).code).toBe("validation_error");
    return (err as ApiError).details ?? [];
  }
  throw new Error("expected a validation error");
}

describe("parseSearchFilters, query form", () => {
  it("reads comma-separated lists and JSON array strings from the raw URL, with defaults", () => {
    const url =
      "/api/v1/leads?positiveKeywords=%5B%22plumb%22%2C%22roof%2C%20tile%22%5D&negativeKeywords=a,,b&stateInclude=tx&orColumns=wCompanyName,email";
    const f = parseSearchFilters(url, "query");
    expect(f.positiveKeywords).toEqual(["plumb", "roof, tile"]);
    expect(f.negativeKeywords).toEqual(["a", "b"]);
    expect(f.stateInclude).toEqual(["TX"]);
    expect(f.orColumns).toEqual(["companyName", "email"]);
    expect(f).toMatchObject({
      sortBy: "lastBuyingSignal",
      sortOrder: "desc",
      page: 1,
      limit: 100,
      database: "other",
    });
  });

  it("re-joins a list the validator split at its commas", () => {
    const f = parseSearchFilters({ positiveKeywords: ['["plumb"', '"roof"]'], limit: 5 }, "query");
    expect(f.positiveKeywords).toEqual(["plumb", "roof"]);
    expect(f.limit).toBe(5);
  });

  it("reports every problem with its path", () => {
    const details = problems(() =>
      parseSearchFilters("?positiveKeywords=x&limit=5000&sortBy=nope&orColumns=zzz&minStars=abc", "query"),
    );
    expect(details.map((d) => d.path)).toEqual([
      ["query", "orColumns"],
      ["query", "limit"],
      ["query", "minStars"],
      ["query", "sortBy"],
    ]);
  });
});

describe("parseSearchFilters, body form", () => {
  it("takes JSON arrays and numbers, ignores unknown members, and resolves aliases", () => {
    const f = parseSearchFilters(
      {
        positiveKeywords: ["a"],
        nameIncludeTerms: ["b"],
        sortBy: "wCompanyName",
        minStars: 4,
        maxResults: 9,
      },
      "body",
    );
    expect(f.includeTerms).toEqual({ companyName: ["b"] });
    expect(f.sortBy).toBe("companyName");
    expect(f.ranges.Stars).toEqual({ min: 4, max: null });
  });

  it("rejects wrong types with details under the given path", () => {
    const details = problems(() =>
      parseSearchFilters({ positiveKeywords: "a,b", limit: "5", page: 1.5 }, "body", {
        path: ["body", "filters"],
      }),
    );
    expect(details.map((d) => d.path)).toEqual([
      ["body", "filters", "positiveKeywords"],
      ["body", "filters", "page"],
      ["body", "filters", "limit"],
    ]);
    expect(problems(() => parseSearchFilters([], "body"))).toEqual([
      { path: ["body"], message: "must be an object" },
    ]);
  });

  it("needs a positive filter", () => {
    expect(
      problems(() => parseSearchFilters({ stateInclude: ["TX"], negativeKeywords: ["x"] }, "body")),
    ).toEqual([{ path: ["body", "positiveKeywords"], message: expect.stringContaining("positive filter") }]);
    expect(hasPositiveFilter({ stateInclude: ["TX"] })).toBe(false);
    expect(hasPositiveFilter({ cityIncludeTerms: ["rock"] })).toBe(true);
    expect(hasPositiveFilter({ positiveKeywords: [" "] })).toBe(false);
  });

  it("round-trips through the canonical JSON form", () => {
    const f = parseSearchFilters(
      { positiveKeywords: ["a"], stateExclude: ["ca"], maxReviewCount: 3 },
      "body",
    );
    expect(parseSearchFilters(searchFiltersToJson(f), "body")).toEqual(f);
  });
});

describe("date bounds", () => {
  const now = new Date("2026-03-31T12:00:00Z");
  const at = (raw: string) => {
    const bound = parseDateBound(raw, now);
    return typeof bound === "string" ? bound : `${bound.at.toISOString()}${bound.dateOnly ? " date" : ""}`;
  };
  it("reads ISO dates and date-times (UTC without an offset) and relative bounds", () => {
    expect(at("2026-09-01")).toBe("2026-09-01T00:00:00.000Z date");
    expect(at("2026-09-01T12:30")).toBe("2026-09-01T12:30:00.000Z");
    expect(at("2026-09-01 12:30:15.25")).toBe("2026-09-01T12:30:15.250Z");
    expect(at("2026-09-01T12:00:00+02:00")).toBe("2026-09-01T10:00:00.000Z");
    expect(at("2026-09-01T12:00:00-0530")).toBe("2026-09-01T17:30:00.000Z");
    expect(at("2024-02-29")).toBe("2024-02-29T00:00:00.000Z date");
    expect(at("rel:2h")).toBe("2026-03-31T10:00:00.000Z");
    expect(at("REL:1w")).toBe("2026-03-24T12:00:00.000Z");
    expect(at("rel:1m")).toBe("2026-02-28T12:00:00.000Z");
    expect(at("rel:13m")).toBe("2025-02-28T12:00:00.000Z");
    expect(at("rel:2y")).toBe("2024-03-31T12:00:00.000Z");
    expect(at("rel:100000y")).toBe("0001-01-01T00:00:00.000Z");
  });
  it("refuses what is not a real date", () => {
    for (const raw of [
      "2025-02-29",
      "2026-00-10",
      "0000-01-01",
      "2026-1-1",
      "2026-09-01T25:00",
      "rel:0d",
      "rel:7",
      "7d",
      "2026-09-01T10:00+24:00",
    ]) {
      expect(at(raw), raw).not.toMatch(/^\d{4}-/);
    }
  });
});

describe("term items and parts", () => {
  it("splits a query list at commas outside {...} objects", () => {
    const f = parseSearchFilters(
      '?positiveKeywords=a&emailPrimaryInclude={"v":"a,b","m":"starts"},plain,{"v":"}, {x"}',
      "query",
    );
    expect(f.fieldTerms.emailPrimary!.include).toEqual([
      { v: "a,b", m: "starts" },
      { v: "plain", m: "contains" },
      { v: "}, {x", m: "contains" },
    ]);
  });
  it("a phone item's digits drop a leading +1 or the 1 of 11 digits", () => {
    expect(phoneTermDigits("(512)")).toBe("512");
    expect(phoneTermDigits("+1 512")).toBe("512");
    expect(phoneTermDigits("1 (512) 555-0142")).toBe("5125550142");
    expect(phoneTermDigits("15")).toBe("15");
    expect(phoneTermDigits("ext")).toBeNull();
  });
  it("wildcard parts: * everywhere, spaces too in URL columns", () => {
    expect(termParts("*auto*repair*", false)).toEqual(["auto", "repair"]);
    expect(termParts("pool spa*repair", false)).toEqual(["pool spa", "repair"]);
    expect(termParts("pool spa*repair", true)).toEqual(["pool", "spa", "repair"]);
    expect(termParts("**", false)).toEqual([]);
  });
});
