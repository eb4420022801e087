import { sql, type RawBuilder } from "kysely";

/** `{1,2,3}`: PostgreSQL's text form of an integer array. Throws on anything but safe integers. */
function arrayText(values: readonly number[]): string {
  for (const value of values) {
    if (!Number.isSafeInteger(value)) throw new Error(`not an integer: ${String(value)}`);
  }
  return `{${values.join(",")}}`;
}

/**
 * An `integer[]` parameter of many values, sent as one array literal that PostgreSQL casts. pg
 * would serialise a JavaScript array element by element into a string of as many pieces; an
 * export's 100,000 ids made several such strings, each held for the whole statement, which the
 * garbage collector promoted and kept (docs/performance.md, 2026-11-28, the export's memory).
 * Callers pass ids, so a value that is not an integer is a programming error (thrown).
 */
export function integerArray(values: readonly number[]): RawBuilder<number[]> {
  return sql<number[]>`cast(${arrayText(values)} as integer[])`;
}

/** The same array inlined in the SQL text, for statements that take no parameters (COPY). */
export function integerArrayLiteral(values: readonly number[]): RawBuilder<number[]> {
  return sql<number[]>`cast(${sql.lit(arrayText(values))} as integer[])`;
}

/**
 * The values as a set to test membership in: `column in ${integerSet(ids)}`. Unlike
 * `column = any(array)`, whose planning estimates each element's selectivity (122 ms for 100,000
 * ids, paid again at every execution of a statement), the planner takes the set's size from the
 * array and plans it in under a millisecond. Duplicates count once.
 */
export function integerSet(values: readonly number[]): RawBuilder<unknown> {
  return sql`(select unnest(${integerArray(values)}))`;
}
