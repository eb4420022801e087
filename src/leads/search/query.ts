import { sql, type RawBuilder, type SqlBool } from "kysely";
import { leadJsonSql } from "../presenter-sql.js";
import { LEAD_RECORD_COLUMNS, type LeadRecordRow } from "../repository.js";
import { DEFAULT_OR_COLUMNS } from "./columns.js";
import { columnMatch, dateConditions, searchCondition, sortColumn } from "./condition.js";
import { DATE_FILTERS } from "./dates.js";
import type { SearchFilters } from "./filters.js";
import type { FieldTermFilter } from "./terms.js";
import { SEPARATOR, and, like, or, partsMatch, partsPattern, termParts, type Condition } from "./patterns.js";

export { searchCondition, sortColumn, termMatchesAny } from "./condition.js";

/**
 * Whether the narrow search table `lead_search` answers a search on its own (docs/search.md): the
 * keyword shapes a client types first (positive and negative keywords over the four searched
 * columns, with `*` wildcards or not, optionally states), sorted by the default key or by id. Any
 * other filter or sort reads the columns of `leads` and keeps the query over `leads`.
 */
export function searchTableServes(filters: SearchFilters): boolean {
  const defaultGroup =
    filters.orColumns.length === DEFAULT_OR_COLUMNS.length &&
    DEFAULT_OR_COLUMNS.every((c) => filters.orColumns.includes(c));
  const keywords = [...filters.positiveKeywords, ...filters.negativeKeywords];
  const none = (value: object) => Object.keys(value).length === 0;
  return (
    defaultGroup &&
    filters.positiveKeywords.length > 0 &&
    keywords.every((term) => !term.includes(SEPARATOR)) &&
    none(filters.includeTerms) &&
    none(filters.excludeTerms) &&
    filters.search === null &&
    filters.cityInclude.length === 0 &&
    filters.cityExclude.length === 0 &&
    filters.zipInclude.length === 0 &&
    filters.zipExclude.length === 0 &&
    filters.streetInclude.length === 0 &&
    filters.streetExclude.length === 0 &&
    none(filters.emptyFilters) &&
    Object.keys(filters.dates).every((key) => key === "lastBuyingSignal") &&
    filters.buyingSignalTypes.length === 0 &&
    Object.entries(filters.fieldTerms).every(([key, terms]) => servedEmptyFilter(key, terms)) &&
    none(filters.ranges) &&
    none(filters.valueLists) &&
    filters.websiteSchemaFilter.length === 0 &&
    filters.redirect === null &&
    SEARCH_TABLE_SORT_KEYS.has(filters.sortBy)
  );
}

/** The sort keys `lead_search` holds, by field name. */
const SEARCH_TABLE_SORT_KEYS: ReadonlyMap<string, RawBuilder<unknown>> = new Map([
  ["lastBuyingSignal", sql`s.last_buying_signal`],
  ["id", sql`s.id`],
  ["companyName", sql`s.company_name`],
]);

/**
 * The contact term filters whose empty filter `lead_search` answers (`emailPrimaryEmptyFilter`,
 * `phonePrimaryEmptyFilter`), by filter key: its column saying the value is not blank (the
 * migration `2026_11_27_0500_search_contact_and_name` writes it as isEmpty tests it).
 */
const SEARCH_TABLE_FILLED: ReadonlyMap<string, RawBuilder<boolean>> = new Map([
  ["emailPrimary", sql<boolean>`s.has_email`],
  ["phonePrimary", sql<boolean>`s.has_phone`],
]);

/** Whether a field's term filters are only an empty filter that `lead_search` answers. */
function servedEmptyFilter(key: string, terms: FieldTermFilter): boolean {
  return (
    SEARCH_TABLE_FILLED.has(key) &&
    terms.include.length === 0 &&
    terms.exclude.length === 0 &&
    terms.empty !== null
  );
}

/** The columns of `lead_search` a condition or sort key reads (what a walk reads of each lead). */
const SEARCH_TABLE_COLUMNS = sql.raw(
  "s.id, s.search_text, s.state, s.last_buying_signal, s.has_email, s.has_phone, s.company_name",
);

const SEARCH_TABLE_TEXT = sql<string>`s.search_text`;

/** What a date-only `lastBuyingSignalTo` means (DATE_FILTERS): lead_search applies the same bounds. */
const SIGNAL_WHOLE_DAY_TO = DATE_FILTERS.find((f) => f.key === "lastBuyingSignal")?.wholeDayTo ?? false;

/**
 * A keyword over the four searched columns, on `lead_search s`. Without spaces it matches exactly
 * when its parts (split at `*`) occur in order within one value of `search_text`. With spaces, it
 * matches literally in some column (spaces kept) or through the space wildcard in a URL column;
 * either way `search_text` passes the URL form's pattern (the looser one, and the only one the
 * trigram index is asked for). Then a literal match in `search_text` decides, else the lead's two
 * URL columns are read, for the few rows that pass the URL form only.
 */
function searchTableTerm(term: string): Condition {
  const literal = partsMatch(SEARCH_TABLE_TEXT, termParts(term, false), true);
  if (!/\s/.test(term)) return literal;
  const urls = or([columnMatch("registeredUrl", term), columnMatch("crawledUrl", term)]);
  // A scalar subquery, read per row: PostgreSQL would turn an EXISTS under OR into a hashed
  // subplan over every lead.
  return sql<SqlBool>`(${like(SEARCH_TABLE_TEXT, partsPattern(termParts(term, true)))}
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
  // The Last Buying Signal bounds: lead_search holds the column (its default sort key).
  const signal = filters.dates.lastBuyingSignal;
  if (signal) all.push(...dateConditions("last_buying_signal", signal, SIGNAL_WHOLE_DAY_TO, false, "s"));
  for (const [key, terms] of Object.entries(filters.fieldTerms)) {
    const filled = SEARCH_TABLE_FILLED.get(key);
    if (!filled || terms.empty === null) throw new Error(`lead_search does not answer the ${key} filters`);
    all.push(terms.empty === "only_empty" ? sql<SqlBool>`not ${filled}` : sql<SqlBool>`${filled}`);
  }
  return and(all);
}

/** Where a search's matches are read (matchTable). */
export interface MatchTable {
  /** The FROM item: `lead_search s` or `leads`. */
  table: RawBuilder<unknown>;
  /** Whether that is `lead_search s` (whose other columns are in `leads`). */
  searchTable: boolean;
  /** The lead id column. */
  id: RawBuilder<unknown>;
  /** The search's sort key. */
  sortKey: RawBuilder<unknown>;
  /** The WHERE condition of the search's filters. */
  condition: Condition;
}

/**
 * Where a search's matches are read: `lead_search s` when it serves the search (and
 * `useSearchTable`), else `leads`. Both give the same rows with the same sort keys.
 */
export function matchTable(filters: SearchFilters, useSearchTable = true): MatchTable {
  if (useSearchTable && searchTableServes(filters)) {
    return {
      table: sql`lead_search s`,
      searchTable: true,
      id: sql`s.id`,
      sortKey: SEARCH_TABLE_SORT_KEYS.get(filters.sortBy)!,
      condition: searchTableCondition(filters),
    };
  }
  return leadsMatchTable(filters);
}

/** `leads` as the match table: the search's sort key, and `condition` (its filters by default). */
export function leadsMatchTable(
  filters: SearchFilters,
  condition: Condition = searchCondition(filters),
): MatchTable {
  return {
    table: sql`leads`,
    searchTable: false,
    id: sql`leads.id`,
    sortKey: sortColumn(filters),
    condition,
  };
}

/**
 * Where a search's matches come from: their id and sort key columns, and FROM and WHERE with the
 * account's history (`h`) left-joined (matchTable).
 */
function matchSource(
  filters: SearchFilters,
  accountId: number,
  useSearchTable: boolean,
): { columns: RawBuilder<unknown>; from: RawBuilder<unknown> } {
  const { table, id, sortKey, condition } = matchTable(filters, useSearchTable);
  return {
    columns: sql`${id}, ${sortKey} as sort_key`,
    from: sql`from ${table}
      left join lead_export_history h on h.account_id = ${accountId} and h.lead_id = ${id}
      where ${condition}`,
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
  /** Only matches the account has not received (`excludePurchased`), before counting and paging. */
  onlyNew?: boolean;
  /** The result list holds the new matches first, then the received ones (each in sort order). */
  newFirst?: boolean;
  /** Most leads of the page (`maxResults`); the page still starts at `(page - 1) * limit`. */
  take?: number;
}

/**
 * A lead of the page as JSON text, from the `leads` row `alias`; `received` is whether the
 * account already received it (searchPageJsonQuery).
 */
export type LeadJsonOf = (alias: string, received: RawBuilder<boolean>) => RawBuilder<string>;

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
 * searchPageQuery with each lead of the page as JSON text built by PostgreSQL, instead of its
 * columns: for answers that write the leads as they are. `leadJson` builds it: the API's Lead
 * (leadJsonSql, `GET /leads`) by default, the preview's lead for the preview (previewLeadJsonSql).
 */
export function searchPageJsonQuery(
  filters: SearchFilters,
  options: SearchPageOptions,
  leadJson: LeadJsonOf = (alias) => leadJsonSql(alias),
): RawBuilder<SearchPageJsonQueryRow> {
  return pageQuery(
    filters,
    options,
    sql`case when leads.id is null then null else ${leadJson("leads", sql<boolean>`p.received`)} end as lead_json`,
  );
}

function pageQuery(filters: SearchFilters, options: SearchPageOptions, leadSelect: RawBuilder<unknown>) {
  const useSearchTable = options.useSearchTable ?? true;
  const offset = (filters.page - 1) * filters.limit;
  const take = Math.min(filters.limit, options.take ?? filters.limit);
  // The order of the result list: with newFirst, new matches (received false) before received ones.
  const listOrder = (prefix: string) =>
    options.newFirst
      ? sql`${sql.ref(`${prefix}.received`)}, ${orderOf(filters, prefix)}`
      : orderOf(filters, prefix);
  const pageOf = (source: RawBuilder<unknown>) =>
    sql`select m.id, m.sort_key, m.received from ${source} m
        order by ${listOrder("m")} limit ${take} offset ${offset}`;
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
  const matched = matchesOf(filters, options.accountId, useSearchTable);
  const matches = options.onlyNew
    ? sql`matches as materialized (select * from (${matched}) x where not x.received)`
    : sql`matches as materialized (${matched})`;
  const countedMatches = sql`select count(*)::int as total_matches, (count(*) filter (where not received))::int as new_matches
    from matches`;
  const answer = (pageRows: RawBuilder<unknown>) => sql`
    select counts.total_matches, counts.new_matches, p.id as page_id, p.received, ${leadSelect}
    from counts
    left join lateral (${pageRows}) p on true
    left join leads on leads.id = p.id
    order by ${listOrder("p")}`;

  const walkOrder = useSearchTable ? pageWalkOrder(filters) : null;
  if (walkOrder === null) {
    return sql<never>`with ${matches}, counts as materialized (${countedMatches}) ${answer(page)}`;
  }
  // The walk (docs/search.md, "The broad page by walking the sort order"): the first `pageEnd`
  // matches in sort order among the first WALK_ROWS_PER_PAGE_ROW * pageEnd leads of lead_search.
  // When it finds them all (and, under a cap, no more new ones than the cap), they are the start
  // of the result list, so the page is cut from them and the counts are one parallel aggregate.
  // With newFirst or onlyNew the result list starts with the new matches: the walk skips the
  // received ones, and its `pageEnd` new matches (within the cap) are that start. Otherwise the
  // matches are collected as above. Each branch runs only when its condition holds.
  const pageEnd = offset + take;
  const gives = sql`(select yes from walk_gives_page)`;
  const newOnly = options.newFirst === true || options.onlyNew === true;
  const allCounts = countsOf(filters, options.accountId, useSearchTable);
  return sql<never>`
    with walk as materialized (
      select s.id, ${SEARCH_TABLE_SORT_KEYS.get(filters.sortBy)} as sort_key from (
        select ${SEARCH_TABLE_COLUMNS} from lead_search s
        order by ${walkOrder} limit ${pageEnd * WALK_ROWS_PER_PAGE_ROW}
      ) s
      where ${searchTableCondition(filters)}
        ${newOnly ? sql`and not exists (select 1 from lead_export_history h where h.account_id = ${options.accountId} and h.lead_id = s.id)` : sql``}
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
      select * from (${
        options.onlyNew
          ? sql`select new_matches as total_matches, new_matches from (${allCounts}) a`
          : allCounts
      }) c where ${gives}
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
 * The index orders of `lead_search` a page can be read in (lead_search_signal_idx,
 * lead_search_company_name_idx and the primary key), by sort key and direction; the other
 * directions of the two (nulls last) have none.
 */
const WALK_ORDERS: ReadonlyMap<string, RawBuilder<unknown>> = new Map([
  ["lastBuyingSignal desc", sql`s.last_buying_signal desc nulls last, s.id desc`],
  ["id desc", sql`s.id desc`],
  ["id asc", sql`s.id asc`],
  ["companyName asc", sql`s.company_name asc nulls last, s.id asc`],
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
