import { describe, expect, it } from "vitest";
import { ApiError } from "../src/http/errors.js";
import { hasPositiveFilter, parseSearchFilters, searchFiltersToJson } from "../src/leads/search/filters.js";

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
      ["query", "minStars"],
      ["query", "limit"],
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
    expect(f.minStars).toBe(4);
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
