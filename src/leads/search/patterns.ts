import { sql, type RawBuilder, type SqlBool } from "kysely";

export type Condition = RawBuilder<SqlBool>;

/** Separator between the columns of `search_text` (and between list items of one column). */
export const SEPARATOR = "\u0001";

/** Escapes LIKE's special characters so a `%`, `_` or `\` typed by a user is literal. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, "\\$&");
}

/** Escapes the characters that are special in a PostgreSQL regular expression. */
export function escapeRegex(text: string): string {
  return text.replace(/[\\^$.|?*+()[\]{}]/g, "\\$&");
}

/** `%term%`: the term anywhere, literally. */
export function plainPattern(term: string): string {
  return `%${escapeLike(term)}%`;
}

/**
 * The literal parts of a keyword or `...IncludeTerms` term, in order: `*` is a wildcard (any run
 * of characters within one value), and in a URL column so is a space. Leading and trailing
 * wildcards add nothing to a substring match (`*dental*` is `dental`).
 */
export function termParts(term: string, urlColumn: boolean): string[] {
  return term.split(urlColumn ? /[*\s]+/ : /\*+/).filter((p) => p.length > 0);
}

/** `%part1%part2%`: the parts in order, anything between (across values too: a prefilter). */
export function partsPattern(parts: string[]): string {
  return parts.length === 0 ? "%" : `%${parts.map(escapeLike).join("%")}%`;
}

/** `part1[^\x01]*part2`: the parts in order within one value of a separator-joined text. */
export function partsRegex(parts: string[]): string {
  return parts.map(escapeRegex).join(`[^${SEPARATOR}]*`);
}

export const like = (text: RawBuilder<string>, pattern: string): Condition =>
  sql<SqlBool>`${text} like lower(${pattern})`;

export const or = (conditions: Condition[]): Condition =>
  conditions.length === 0
    ? sql<SqlBool>`false`
    : conditions.length === 1
      ? conditions[0]!
      : sql<SqlBool>`(${sql.join(conditions, sql` or `)})`;

export const and = (conditions: Condition[]): Condition =>
  conditions.length === 0
    ? sql<SqlBool>`true`
    : conditions.length === 1
      ? conditions[0]!
      : sql<SqlBool>`(${sql.join(conditions, sql` and `)})`;

/**
 * Whether the parts occur in order within one value of `text` (lower-cased, values joined with
 * the separator, or a single value when `joined` is false). One part, or a single value: a LIKE.
 * More parts in a joined text: the LIKE of the parts (across values too), and for the rows it
 * keeps the regular expression that keeps them within one value, inside `coalesce(..., false)`
 * (the same truth: the expression is never null where `text` is not).
 * - The trigram index answers the LIKE, and the recheck runs the cheap LIKE on every row the
 *   index gives; only the rows it keeps run the expression (docs/performance.md, 2026-12-08:
 *   3-7% off the broad inner-wildcard searches at 1M and 5M leads).
 * - The coalesce is what keeps the estimate: PostgreSQL prices it as an unknown condition (half
 *   the rows) instead of multiplying the LIKE's selectivity by the expression's, as if unrelated.
 *   The bare pair was estimated at 103 rows for 12,899 matches at 1M leads, and the account's
 *   history then joined by a loop (2026-12-07); this form at half the LIKE's estimate, or more.
 */
export function partsMatch(text: RawBuilder<string>, parts: string[], joined: boolean): Condition {
  const anywhere = like(text, partsPattern(parts));
  if (parts.length < 2 || !joined) return anywhere;
  return sql<SqlBool>`(${anywhere} and coalesce(${text} ~ lower(${partsRegex(parts)}), false))`;
}
