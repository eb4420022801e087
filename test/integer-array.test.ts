import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { csvCopy } from "../src/db/database.js";
import { integerArray, integerArrayLiteral, integerSet } from "../src/db/integer-array.js";
import { useTestApp } from "./helpers/app.js";

const t = useTestApp();

describe("integer arrays sent as one literal", () => {
  it("a parameter casts to the same integer[] in order, empty included", async () => {
    for (const values of [[], [3, 1, 2], [0, -7, 2_147_483_647]]) {
      const row = await sql<{ a: number[] }>`select ${integerArray(values)} as a`
        .execute(t.ctx.db)
        .then((r) => r.rows[0]);
      expect(row?.a).toEqual(values);
    }
  });

  it("a set tests membership, a duplicate counting once", async () => {
    const { rows } = await sql<{ n: number }>`
      select n from generate_series(1, 6) as n where n in ${integerSet([5, 2, 5, 9])} order by n`.execute(
      t.ctx.db,
    );
    expect(rows.map((r) => r.n)).toEqual([2, 5]);
  });

  it("the inlined literal works where no parameter may go (COPY)", async () => {
    const { rows } = await csvCopy(sql`select unnest(${integerArrayLiteral([4, 8])})`).execute(t.ctx.db);
    expect(rows[0]![0].toString()).toBe("4\n8\n");
  });

  it("refuses anything but safe integers before sending", () => {
    for (const bad of [1.5, Number.NaN, Infinity, 2 ** 53]) {
      expect(() => integerArray([1, bad])).toThrow(/not an integer/);
      expect(() => integerArrayLiteral([bad])).toThrow(/not an integer/);
      expect(() => integerSet([bad])).toThrow(/not an integer/);
    }
  });
});
