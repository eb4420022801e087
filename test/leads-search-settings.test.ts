import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { Db } from "../src/db/database.js";
import { SEARCH_SETTINGS, tuneSearch } from "../src/leads/search/settings.js";
import { useTestApp } from "./helpers/app.js";

// The search's settings (src/leads/search/settings.ts, docs/search.md "The search's settings"):
// the search pool's sessions carry them and tuneSearch gives them to one transaction. (The plan
// `enable_material` avoids needs tables of bench size: `npm run bench -- search` meets it with
// its new account, docs/search.md.)

const t = useTestApp();

/** SEARCH_SETTINGS as pg_settings shows them (work_mem in kB, statement_timeout in ms). */
const SHOWN = {
  work_mem: "65536",
  max_parallel_workers_per_gather: "0",
  parallel_setup_cost: "10",
  parallel_tuple_cost: "0.001",
  parallel_leader_participation: "off",
  enable_material: "off",
  statement_timeout: "60000",
};

async function settingsOf(db: Db | Parameters<typeof tuneSearch>[0]): Promise<Record<string, string>> {
  const { rows } = await sql<{ name: string; setting: string }>`
    select name, setting from pg_settings where name = any(${Object.keys(SEARCH_SETTINGS)})`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.name, r.setting]));
}

describe("the search's settings", () => {
  it("every connection of the search pool starts with them; the main pool keeps PostgreSQL's defaults", async () => {
    expect(Object.keys(SHOWN).sort()).toEqual(Object.keys(SEARCH_SETTINGS).sort());
    const searchPool = await Promise.all([settingsOf(t.ctx.searchDb), settingsOf(t.ctx.searchDb)]);
    expect(searchPool).toEqual([SHOWN, SHOWN]);
    const main = await settingsOf(t.ctx.db);
    expect(main).toMatchObject({ enable_material: "on", statement_timeout: "0" });
  });

  it("tuneSearch sets them for its transaction only", async () => {
    const inside = await t.ctx.db.transaction().execute(async (trx) => {
      await tuneSearch(trx);
      return settingsOf(trx);
    });
    expect(inside).toEqual(SHOWN);
    expect(await settingsOf(t.ctx.db)).toMatchObject({ enable_material: "on" });
  });
});
