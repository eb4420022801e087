import { beforeAll, describe, expect, it } from "vitest";
import type { Trx } from "../src/db/database.js";
import { streamCandidates, addToReservoir, type CandidateQuery } from "../src/exports/job/repository.js";
import { generateLeads } from "../src/leads/import/generate.js";
import { importLeadRecords } from "../src/leads/import/importer.js";
import { parseSearchFilters } from "../src/leads/search/filters.js";
import { matchTable } from "../src/leads/search/query.js";
import { tuneSearch } from "../src/leads/search/settings.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { markReceived } from "./helpers/leads-factories.js";

// An export reads its candidates from `lead_search` when that table serves the search, as a
// search does (docs/exports.md): the same leads, in the same export order, as from `leads`.

const t = useTestApp();
let accountId: number;
let ids: number[];

beforeAll(async () => {
  await importLeadRecords(t.ctx.db, generateLeads(1_500, 41));
  ids = (await t.ctx.db.selectFrom("leads").select("id").orderBy("id").execute()).map((r) => r.id);
  ({ accountId } = await buildAccount(t.ctx.db));
  await markReceived(
    t.ctx.db,
    accountId,
    ids.filter((_, i) => i % 7 === 0),
  );
  await t.ctx.db.transaction().execute(async (trx) => {
    const reserved = ids.filter((_, i) => i % 11 === 0);
    await addToReservoir(trx, accountId, reserved, new Date(Date.now() + 86_400_000));
  });
}, 120_000);

/** Every candidate of a query as `id received reserved urls`, in order. */
async function candidates(query: CandidateQuery): Promise<string[]> {
  return t.ctx.db.transaction().execute(async (trx: Trx) => {
    await tuneSearch(trx);
    const out: string[] = [];
    for await (const batch of streamCandidates(trx, query)) {
      for (const c of batch)
        out.push(`${c.id} ${c.received} ${c.reserved} ${c.registeredUrl} ${c.crawledUrl}`);
    }
    return out;
  });
}

const SHAPES: Record<string, unknown>[] = [
  { positiveKeywords: ["a", "e"] },
  { positiveKeywords: ["*an*", "*plumb*", "*roof*"], stateInclude: ["TX", "CA", "FL", "NY"] },
  { positiveKeywords: ["*auto*repair*", "*home*remodel*", "e"], negativeKeywords: ["inc"] },
  { positiveKeywords: ["o"], sortBy: "wCompanyName", sortOrder: "asc" },
  { positiveKeywords: ["i"], sortBy: "id", sortOrder: "asc", stateExclude: ["NY"] },
];

describe("export candidates", () => {
  for (const [i, shape] of SHAPES.entries()) {
    for (const [newFirst, onlyNew, withUrls] of [
      [false, false, false],
      [true, false, true],
      [false, true, false],
    ] as const) {
      it(`shape ${i + 1}${newFirst ? ", new first" : ""}${onlyNew ? ", only new" : ""}${withUrls ? ", with URLs" : ""}: the same from lead_search as from leads`, async () => {
        const filters = parseSearchFilters(shape, "body");
        expect(matchTable(filters).searchTable).toBe(true);
        const query: CandidateQuery = {
          accountId,
          filters,
          selectedIds: null,
          newFirst,
          onlyReceived: false,
          onlyNew,
          withUrls,
        };
        const fromSearchTable = await candidates(query);
        const fromLeads = await candidates({ ...query, useSearchTable: false });
        expect(fromSearchTable.length).toBeGreaterThan(20);
        expect(fromSearchTable).toEqual(fromLeads);
      });
    }
  }
});
