import { sql, type RawBuilder, type SqlBool } from "kysely";
import { resolveLeadField } from "../fields.js";
import { leadJsonSql } from "../presenter-sql.js";
import { LEAD_RECORD_COLUMNS, type LeadRecordRow } from "../repository.js";
import { DEFAULT_OR_COLUMNS, TERM_COLUMNS, type SearchFilters, type TermColumn } from "./filters.js";

type Condition = RawBuilder<SqlBool>;

/** Separator between the columns of `leads.search_text` (and between list items of one column). */
const SEPARATOR = "\u0001";

/** The URL columns: a space in a term is the `%` wildcard there. */
const URL_COLUMNS: ReadonlySet<TermColumn> = new Set(["registeredUrl", "crawledUrl"]);

/** The columns held by `leads.search_text`: the four searched columns (docs/leads.md, search). */
const SEARCH_TEXT_COLUMNS: ReadonlySet<TermColumn> = new Set(DEFAULT_OR_COLUMNS);

/**
 * Each term column as a lower-cased, never-null text. List-like columns (categories, the two
 * phones, the eight e-mail addresses) are joined with the separator, so a term matches when it is
 * a substring of one of their values.
 */
const COLUMN_TEXT: Record<TermColumn, RawBuilder<string>> = {
  registeredUrl: sql`lower(coalesce(leads.registered_url, ''))`,
  crawledUrl: sql`lower(coalesce(leads.crawled_url, ''))`,
  companyName: sql`lower(coalesce(leads.company_name, ''))`,
  aiCategoryEstimation: sql`lower(coalesce(array_to_string(leads.ai_category_estimation, chr(1)), ''))`,
  description: sql`lower(coalesce(leads.description, ''))`,
  city: sql`lower(coalesce(leads.city, ''))`,
  street: sql`lower(coalesce(leads.street, ''))`,
  phone: sql`lower(concat_ws(chr(1), leads.phone, leads.phone_secondary))`,
  email: sql`lower(concat_ws(chr(1), leads.email, leads.email_secondary, leads.email_tier1, leads.email_tier2, leads.email_tier3, leads.email_tier4, leads.email_tier5, leads.email_tier6))`,
};
const SEARCH_TEXT = sql<string>`leads.search_text`;

/** Escapes LIKE's special characters so a `%`, `_` or `\` typed by a user is literal. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, "\\$&");
}

/** `%term%`: the term anywhere, literally. */
export function plainPattern(term: string): string {
  return `%${escapeLike(term)}%`;
}

/** `%word1%word2%`: in URL columns a space is a wildcard (the words in order, anything between). */
export function urlPattern(term: string): string {
  return `%${term.split(/\s+/).filter(Boolean).map(escapeLike).join("%")}%`;
}

/** The LIKE pattern of a term in one column. */
export function columnPattern(column: TermColumn, term: string): string {
  return URL_COLUMNS.has(column) ? urlPattern(term) : plainPattern(term);
}

const like = (text: RawBuilder<string>, pattern: string): Condition =>
  sql<SqlBool>`${text} like lower(${pattern})`;

const or = (conditions: Condition[]): Condition =>
  conditions.length === 1 ? conditions[0]! : sql<SqlBool>`(${sql.join(conditions, sql` or `)})`;

const and = (conditions: Condition[]): Condition =>
  conditions.length === 1 ? conditions[0]! : sql<SqlBool>`(${sql.join(conditions, sql` and `)})`;

/**
 * A term matching any of `columns`. When every column is in `search_text` the condition starts
 * with an indexed LIKE on it: exact on its own for the four columns and a term without spaces,
 * otherwise a prefilter before the per-column recheck.
 */
export function termMatchesAny(columns: readonly TermColumn[], term: string): Condition {
  const precise = or(columns.map((c) => like(COLUMN_TEXT[c], columnPattern(c, term))));
  const indexable = !term.includes(SEPARATOR) && columns.every((c) => SEARCH_TEXT_COLUMNS.has(c));
  if (!indexable) return precise;
  if (columns.length === SEARCH_TEXT_COLUMNS.size && !/\s/.test(term)) {
    return like(SEARCH_TEXT, plainPattern(term));
  }
  // The URL pattern accepts everything the plain pattern does, so it is the looser prefilter.
  const loose = columns.some((c) => URL_COLUMNS.has(c)) ? urlPattern(term) : plainPattern(term);
  return and([like(SEARCH_TEXT, loose), precise]);
}

/** The values lower-cased by PostgreSQL (the same `lower()` as the column side). */
const lowerAll = (values: string[]) => sql.join(values.map((v) => sql`lower(${v})`));

/**
 * The WHERE condition of a search over `leads`, exactly as the lead search model says:
 * phase 1 (any positive keyword over the OR group, or any include term of a column in the OR
 * group, over its column), the required include terms of columns outside the OR group, phase 2
 * (negative keywords over the OR group, exclude terms over their column), then the narrowing
 * filters (state, city, ZIP, stars, reviews, schema types), all ANDed.
 */
export function searchCondition(filters: SearchFilters): Condition {
  const group = filters.orColumns;
  const all: Condition[] = [];

  const phase1: Condition[] = filters.positiveKeywords.map((term) => termMatchesAny(group, term));
  for (const column of TERM_COLUMNS) {
    const terms = filters.includeTerms[column];
    if (!terms || terms.length === 0) continue;
    const matches = terms.map((term) => termMatchesAny([column], term));
    // In the OR group: one more way to be included. Outside it: required (any of its terms).
    if (group.includes(column)) phase1.push(...matches);
    else all.push(or(matches));
  }
  if (phase1.length > 0) all.unshift(or(phase1));

  for (const term of filters.negativeKeywords) all.push(sql<SqlBool>`not ${termMatchesAny(group, term)}`);
  for (const column of TERM_COLUMNS) {
    for (const term of filters.excludeTerms[column] ?? []) {
      all.push(sql<SqlBool>`not ${termMatchesAny([column], term)}`);
    }
  }

  if (filters.stateInclude.length > 0) {
    all.push(sql<SqlBool>`upper(leads.state) in (${sql.join(filters.stateInclude)})`);
  }
  if (filters.stateExclude.length > 0) {
    all.push(sql<SqlBool>`coalesce(upper(leads.state), '') not in (${sql.join(filters.stateExclude)})`);
  }
  if (filters.cityInclude.length > 0) {
    all.push(sql<SqlBool>`lower(leads.city) in (${lowerAll(filters.cityInclude)})`);
  }
  if (filters.cityExclude.length > 0) {
    all.push(sql<SqlBool>`coalesce(lower(leads.city), '') not in (${lowerAll(filters.cityExclude)})`);
  }
  if (filters.zipInclude.length > 0) {
    all.push(or(filters.zipInclude.map((zip) => sql<SqlBool>`leads.zip like ${`${escapeLike(zip)}%`}`)));
  }
  for (const zip of filters.zipExclude) {
    all.push(sql<SqlBool>`coalesce(leads.zip, '') not like ${`${escapeLike(zip)}%`}`);
  }
  if (filters.minStars !== null) all.push(sql<SqlBool>`leads.stars >= ${filters.minStars}`);
  if (filters.maxStars !== null) all.push(sql<SqlBool>`leads.stars <= ${filters.maxStars}`);
  if (filters.minReviewCount !== null)
    all.push(sql<SqlBool>`leads.review_count >= ${filters.minReviewCount}`);
  if (filters.maxReviewCount !== null)
    all.push(sql<SqlBool>`leads.review_count <= ${filters.maxReviewCount}`);
  if (filters.websiteSchemaFilter.length > 0) {
    all.push(sql<SqlBool>`leads.website_schema_types && cast(${filters.websiteSchemaFilter} as text[])`);
  }
  return all.length === 0 ? sql<SqlBool>`true` : and(all);
}

/**
 * Whether the narrow search table `lead_search` answers a search on its own (docs/search.md): the
 * keyword shapes a client types first (positive and negative keywords over the four searched
 * columns, optionally states), sorted by the default key or by id. Any other filter or sort reads
 * the columns of `leads` and keeps the query over `leads`.
 */
export function searchTableServes(filters: SearchFilters): boolean {
  const defaultGroup =
    filters.orColumns.length === DEFAULT_OR_COLUMNS.length &&
    DEFAULT_OR_COLUMNS.every((c) => filters.orColumns.includes(c));
  const keywords = [...filters.positiveKeywords, ...filters.negativeKeywords];
  return (
    defaultGroup &&
    filters.positiveKeywords.length > 0 &&
    keywords.every((term) => !term.includes(SEPARATOR)) &&
    Object.keys(filters.includeTerms).length === 0 &&
    Object.keys(filters.excludeTerms).length === 0 &&
    filters.cityInclude.length === 0 &&
    filters.cityExclude.length === 0 &&
    filters.zipInclude.length === 0 &&
    filters.zipExclude.length === 0 &&
    filters.minStars === null &&
    filters.maxStars === null &&
    filters.minReviewCount === null &&
    filters.maxReviewCount === null &&
    filters.websiteSchemaFilter.length === 0 &&
    SEARCH_TABLE_SORT_KEYS.has(filters.sortBy)
  );
}

/** The sort keys `lead_search` holds, by field name. */
const SEARCH_TABLE_SORT_KEYS: ReadonlyMap<string, RawBuilder<unknown>> = new Map([
  ["lastBuyingSignal", sql`s.last_buying_signal`],
  ["id", sql`s.id`],
]);

const SEARCH_TABLE_TEXT = sql<string>`s.search_text`;

/**
 * A keyword over the four searched columns, on `lead_search s`. A term without spaces matches
 * exactly when it is in `search_text`. With spaces, it matches literally in some column or through
 * the space wildcard in a URL column; either way `search_text` passes the URL pattern (the looser
 * one, and the only one the trigram index is asked for). Then a literal match in `search_text`
 * decides, else the lead's two URL columns are read, for the few rows that pass the URL pattern
 * only.
 */
function searchTableTerm(term: string): Condition {
  const literal = like(SEARCH_TABLE_TEXT, plainPattern(term));
  if (!/\s/.test(term)) return literal;
  const pattern = urlPattern(term);
  const urls = or([like(COLUMN_TEXT.registeredUrl, pattern), like(COLUMN_TEXT.crawledUrl, pattern)]);
  // A scalar subquery, read per row: PostgreSQL would turn an EXISTS under OR into a hashed
  // subplan over every lead.
  return sql<SqlBool>`(${like(SEARCH_TABLE_TEXT, pattern)}
    and (${literal} or coalesce((select ${urls} from leads where leads.id = s.id), false)))`;
}

/** The WHERE condition of a search served by `lead_search s` (see searchTableServes). */
export function searchTableCondition(filters: SearchFilters): Condition {
  const all: Condition[] = [or(filters.positiveKeywords.map(searchTableTerm))];
  for (const term of filters.negativeKeywords) all.push(sql<SqlBool>`not ${searchTableTerm(term)}`);
  if (filters.stateInclude.length > 0) {
    all.push(sql<SqlBool>`s.state in (${sql.join(filters.stateInclude)})`);
  }
  if (filters.stateExclude.length > 0) {
    all.push(sql<SqlBool>`coalesce(s.state, '') not in (${sql.join(filters.stateExclude)})`);
  }
  return and(all);
}

/**
 * Where a search's matches come from: their id and sort key columns, and FROM and WHERE with the
 * account's history (`h`) left-joined. From `lead_search` when it serves the search, else from
 * `leads`; both give the same rows.
 */
function matchSource(
  filters: SearchFilters,
  accountId: number,
  useSearchTable: boolean,
): { columns: RawBuilder<unknown>; from: RawBuilder<unknown> } {
  if (useSearchTable && searchTableServes(filters)) {
    return {
      columns: sql`s.id, ${SEARCH_TABLE_SORT_KEYS.get(filters.sortBy)} as sort_key`,
      from: sql`from lead_search s
        left join lead_export_history h on h.account_id = ${accountId} and h.lead_id = s.id
        where ${searchTableCondition(filters)}`,
    };
  }
  return {
    columns: sql`leads.id, ${sortColumn(filters)} as sort_key`,
    from: sql`from leads
      left join lead_export_history h on h.account_id = ${accountId} and h.lead_id = leads.id
      where ${searchCondition(filters)}`,
  };
}

/** The matches of a search: id, sort key, whether the account received the lead. */
function matchesOf(filters: SearchFilters, accountId: number, useSearchTable: boolean): RawBuilder<unknown> {
  const { columns, from } = matchSource(filters, accountId, useSearchTable);
  return sql`select ${columns}, (h.lead_id is not null) as received ${from}`;
}

/** The counts over every match, as one parallel aggregate: no match leaves the workers. */
function countsOf(filters: SearchFilters, accountId: number, useSearchTable: boolean): RawBuilder<unknown> {
  return sql`select count(*)::int as total_matches, (count(*) filter (where h.lead_id is null))::int as new_matches
    ${matchSource(filters, accountId, useSearchTable).from}`;
}

/** The column a search sorts by (`sortBy` is a resolved, sortable field name). */
export function sortColumn(filters: SearchFilters): RawBuilder<unknown> {
  const column = resolveLeadField(filters.sortBy)?.column;
  if (!column) throw new Error(`not a sortable field: ${filters.sortBy}`);
  return sql.ref(`leads.${column}`);
}

/** `sort_key <dir> nulls last, id <dir>`: leads without a value last, the id breaks ties. */
function orderOf(filters: SearchFilters, prefix: string): RawBuilder<unknown> {
  const dir = filters.sortOrder === "asc" ? sql`asc` : sql`desc`;
  return sql`${sql.ref(`${prefix}.sort_key`)} ${dir} nulls last, ${sql.ref(`${prefix}.id`)} ${dir}`;
}

/** Options of searchPageQuery and searchPageJsonQuery. */
export interface SearchPageOptions {
  accountId: number;
  cap: number | null;
  /** false: always collect the matches from `leads` (the query before `lead_search`; tests). */
  useSearchTable?: boolean;
}

/**
 * The one query of a search or preview. The matches (id, sort key, received by the account) are
 * collected once, from the narrow `lead_search` when it serves the search (matchesOf); the counts
 * and one page come from them, and the page's leads are read with them. A broad search's page is
 * first looked for by walking `lead_search` in sort order (pageWalkOrder); when the walk finds it,
 * the counts are one parallel aggregate and no match is collected.
 *
 * Rows: one per lead of the page, in order (each with the counts), or a single row with the
 * counts and `page_id` null when the page is empty.
 *
 * With `cap` (whole credits the account can spend), the result list is capped at the balance:
 * every match the account already received stays, and of the new matches only the first `cap`
 * in sort order; the page is cut from that list (this branch only runs when the balance cannot
 * pay for every new match). Without `cap` (preview) the page is cut from all matches.
 */
export function searchPageQuery(
  filters: SearchFilters,
  options: SearchPageOptions,
): RawBuilder<SearchPageQueryRow> {
  return pageQuery(filters, options, sql.join(LEAD_RECORD_COLUMNS.map((c) => sql.ref(`leads.${c}`))));
}

/**
 * searchPageQuery with each lead of the page as the API's Lead in JSON text, built by PostgreSQL
 * (leadJsonSql), instead of its columns: for answers that write the leads as they are (`GET /leads`).
 */
export function searchPageJsonQuery(
  filters: SearchFilters,
  options: SearchPageOptions,
): RawBuilder<SearchPageJsonQueryRow> {
  return pageQuery(
    filters,
    options,
    sql`case when leads.id is null then null else ${leadJsonSql("leads")} end as lead_json`,
  );
}

function pageQuery(filters: SearchFilters, options: SearchPageOptions, leadSelect: RawBuilder<unknown>) {
  const useSearchTable = options.useSearchTable ?? true;
  const offset = (filters.page - 1) * filters.limit;
  const pageOf = (source: RawBuilder<unknown>) =>
    sql`select m.id, m.sort_key, m.received from ${source} m
        order by ${orderOf(filters, "m")} limit ${filters.limit} offset ${offset}`;
  const uncapped = pageOf(sql`matches`);
  const page =
    options.cap === null
      ? uncapped
      : sql`select * from (${uncapped}) u where counts.new_matches <= ${options.cap}
            union all
            select * from (${pageOf(sql`(
              select * from matches where received
              union all
              (select * from matches n where not n.received order by ${orderOf(filters, "n")} limit ${options.cap})
            )`)}) c where counts.new_matches > ${options.cap}`;
  const matches = sql`matches as materialized (${matchesOf(filters, options.accountId, useSearchTable)})`;
  const countedMatches = sql`select count(*)::int as total_matches, (count(*) filter (where not received))::int as new_matches
    from matches`;
  const answer = (pageRows: RawBuilder<unknown>) => sql`
    select counts.total_matches, counts.new_matches, p.id as page_id, p.received, ${leadSelect}
    from counts
    left join lateral (${pageRows}) p on true
    left join leads on leads.id = p.id
    order by ${orderOf(filters, "p")}`;

  const walkOrder = useSearchTable ? pageWalkOrder(filters) : null;
  if (walkOrder === null) {
    return sql<never>`with ${matches}, counts as materialized (${countedMatches}) ${answer(page)}`;
  }
  // The walk (docs/search.md, "The broad page by walking the sort order"): the first `pageEnd`
  // matches in sort order among the first WALK_ROWS_PER_PAGE_ROW * pageEnd leads of lead_search.
  // When it finds them all (and, under a cap, no more new ones than the cap), they are the start
  // of the result list, so the page is cut from them and the counts are one parallel aggregate.
  // Otherwise the matches are collected as above. Each branch runs only when its condition holds.
  const pageEnd = offset + filters.limit;
  const gives = sql`(select yes from walk_gives_page)`;
  return sql<never>`
    with walk as materialized (
      select s.id, ${SEARCH_TABLE_SORT_KEYS.get(filters.sortBy)} as sort_key from (
        select s.id, s.last_buying_signal, s.search_text, s.state from lead_search s
        order by ${walkOrder} limit ${pageEnd * WALK_ROWS_PER_PAGE_ROW}
      ) s
      where ${searchTableCondition(filters)}
      order by ${walkOrder} limit ${pageEnd}
    ),
    walked as materialized (
      select w.id, w.sort_key, (h.lead_id is not null) as received from walk w
      left join lead_export_history h on h.account_id = ${options.accountId} and h.lead_id = w.id
    ),
    walk_gives_page as materialized (
      select count(*) = ${pageEnd}
        ${options.cap === null ? sql`` : sql`and count(*) filter (where not received) <= ${options.cap}`} as yes
      from walked
    ),
    ${matches},
    counts as materialized (
      select * from (${countsOf(filters, options.accountId, useSearchTable)}) c where ${gives}
      union all
      select * from (${countedMatches}) c where not ${gives}
    )
    ${answer(sql`
      select * from (select w.* from walked w order by ${orderOf(filters, "w")} offset ${offset}) w where ${gives}
      union all
      select * from (${page}) f where not ${gives}`)}`;
}

/**
 * Most leads a walk reads per lead of the result list up to the page's end: the walk finds the
 * page when at least 1 lead in 50 matches (a broad search: 1 in 13 to 1 in 30 at 1M leads), and
 * otherwise gives up after 2,500 leads for a first page of 50 (about 8 ms).
 */
const WALK_ROWS_PER_PAGE_ROW = 50;

/** Deepest result position (page × limit) a page is walked for; deeper pages collect the matches. */
const WALK_MAX_PAGE_END = 500;

/**
 * The index orders of `lead_search` a page can be read in (lead_search_signal_idx and the
 * primary key), by sort key and direction; `lastBuyingSignal asc` (nulls last) has none.
 */
const WALK_ORDERS: ReadonlyMap<string, RawBuilder<unknown>> = new Map([
  ["lastBuyingSignal desc", sql`s.last_buying_signal desc nulls last, s.id desc`],
  ["id desc", sql`s.id desc`],
  ["id asc", sql`s.id asc`],
]);

/**
 * The index order to walk for a search's page, or null when the page is not walked: a search
 * `lead_search` serves, without a state to include (a narrow search's matches are too sparse to
 * find by walking), whose page ends within WALK_MAX_PAGE_END, in a walkable order.
 */
function pageWalkOrder(filters: SearchFilters): RawBuilder<unknown> | null {
  if (!searchTableServes(filters) || filters.stateInclude.length > 0) return null;
  if (filters.page * filters.limit > WALK_MAX_PAGE_END) return null;
  return WALK_ORDERS.get(`${filters.sortBy} ${filters.sortOrder}`) ?? null;
}

/** One row of searchPageQuery: the counts, and a lead of the page (null columns when none). */
export type SearchPageQueryRow = {
  total_matches: number;
  new_matches: number;
  page_id: number | null;
  received: boolean | null;
} & LeadRecordRow;

/** One row of searchPageJsonQuery: the counts, and a lead of the page as JSON (null when none). */
export interface SearchPageJsonQueryRow {
  total_matches: number;
  new_matches: number;
  page_id: number | null;
  received: boolean | null;
  lead_json: string | null;
}
