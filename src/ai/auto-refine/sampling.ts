import { sql, type RawBuilder, type SqlBool } from "kysely";
import type { DbOrTrx } from "../../db/database.js";
import { DEFAULT_OR_COLUMNS } from "../../leads/search/columns.js";
import { termMatchesAny } from "../../leads/search/condition.js";
import { escapeLike } from "../../leads/search/patterns.js";

// The lead database as auto-refine reads it: samples of the leads a set of keywords finds, with
// the same matching as a search (`termMatchesAny` over the four default columns, served by the
// trigram index of `leads.search_text`), and whether each lead agrees with the source categories
// (its AI categories or its own category name, compared ignoring case). Every query has a LIMIT,
// so a broad keyword costs its index scan and a bounded read, never a read of every match.

/** A sampled lead: what describes it, and whether its categories agree with the source ones. */
export interface SampledLead {
  id: number;
  companyName: string | null;
  website: string | null;
  category: string | null;
  aiCategories: string[];
  /** Its AI categories or category name are among the source categories. */
  agrees: boolean;
}

/** What a sample is drawn from: leads matching any `include` term and none of `exclude`. */
export interface SampleQuery {
  include: readonly string[];
  /** And matching any of these too (a negative keyword among the positives' leads). */
  also?: readonly string[];
  exclude?: readonly string[];
  /** Lower-cased source categories. */
  categories: readonly string[];
  limit: number;
  /** Only leads that agree (true) or that do not (false). */
  agreeing?: boolean;
  /** One of `of` disjoint slices of the leads (by a hash of the id): independent samples. */
  slice?: { index: number; of: number };
}

/** Whether a lead's AI categories or category name are among `categories` (lower-cased). */
export function agreement(categories: readonly string[]): RawBuilder<SqlBool> {
  const cats = [...categories];
  return sql<SqlBool>`(
    lower(btrim(coalesce(leads.category, ''))) = any(${cats}::text[])
    or exists (
      select 1 from unnest(leads.ai_category_estimation) as c where lower(btrim(c)) = any(${cats}::text[])
    )
  )`;
}

function anyTerm(terms: readonly string[]): RawBuilder<SqlBool> {
  const conditions = terms.map((term) => termMatchesAny(DEFAULT_OR_COLUMNS, term));
  return conditions.length === 0 ? sql<SqlBool>`false` : sql<SqlBool>`(${sql.join(conditions, sql` or `)})`;
}

type Row = {
  id: number;
  company_name: string | null;
  website: string | null;
  category: string | null;
  ai_category_estimation: string[] | null;
  agrees: boolean;
};

function toSampled(row: Row): SampledLead {
  return {
    id: row.id,
    companyName: row.company_name,
    website: row.website,
    category: row.category,
    aiCategories: row.ai_category_estimation ?? [],
    agrees: row.agrees,
  };
}

/** A sample of the leads the query's keywords find (at most `limit`). */
export async function sampleMatching(db: DbOrTrx, query: SampleQuery): Promise<SampledLead[]> {
  if (query.include.length === 0) return [];
  const agree = agreement(query.categories);
  const also = query.also && query.also.length > 0 ? sql`and ${anyTerm(query.also)}` : sql``;
  const exclude = query.exclude && query.exclude.length > 0 ? sql`and not ${anyTerm(query.exclude)}` : sql``;
  const only =
    query.agreeing === undefined ? sql`` : query.agreeing ? sql`and ${agree}` : sql`and not ${agree}`;
  const slice = query.slice
    ? sql`and (hashint4(leads.id) & 2147483647) % ${query.slice.of}::int = ${query.slice.index}::int`
    : sql``;
  const result = await sql<Row>`
    select leads.id, leads.company_name, coalesce(leads.registered_url, leads.crawled_url) as website,
      leads.category, leads.ai_category_estimation, ${agree} as agrees
    from leads
    where ${anyTerm(query.include)} ${also} ${exclude} ${only} ${slice}
    limit ${query.limit}`.execute(db);
  return result.rows.map(toSampled);
}

/**
 * A sample of the leads of the source categories (at most `limit`, shared among them): leads
 * whose own category is one of them (its index) and leads whose AI categories hold one (found
 * through `search_text`, which holds the AI categories, then checked exactly).
 */
export async function sampleAgreeing(
  db: DbOrTrx,
  categories: readonly string[],
  limit: number,
): Promise<SampledLead[]> {
  if (categories.length === 0) return [];
  const per = Math.max(1, Math.ceil(limit / categories.length));
  const seen = new Set<number>();
  const out: SampledLead[] = [];
  for (const category of categories) {
    const result = await sql<Row>`
      (select leads.id, leads.company_name, coalesce(leads.registered_url, leads.crawled_url) as website,
        leads.category, leads.ai_category_estimation, true as agrees
      from leads where lower(btrim(leads.category)) = ${category} limit ${per})
      union all
      (select leads.id, leads.company_name, coalesce(leads.registered_url, leads.crawled_url) as website,
        leads.category, leads.ai_category_estimation, true as agrees
      from leads
      where leads.search_text like ${`%${escapeLike(category)}%`}
        and exists (select 1 from unnest(leads.ai_category_estimation) as c where lower(btrim(c)) = ${category})
      limit ${per})`.execute(db);
    for (const row of result.rows) {
      if (seen.has(row.id) || out.length >= limit) continue;
      seen.add(row.id);
      out.push(toSampled(row));
    }
  }
  return out;
}
