import { sql } from "kysely";
import type { DbOrTrx, Db } from "../db/database.js";

/** A category name of the lead database with how well it fits a text. */
export interface RankedCategory {
  name: string;
  leadCount: number;
  /** 0..1: the weighted share of the name's stemmed words found in the text (rankCategories). */
  score: number;
}

/** Most category names the catalogue keeps (the most used ones). */
const CATALOG_SIZE = 5_000;
/** Longest category name kept. */
const NAME_MAX_LENGTH = 100;
/** The catalogue is rebuilt from the leads when older than this. */
export const CATALOG_MAX_AGE_MS = 10 * 60_000;

/**
 * Rebuilds the catalogue of category names (`category` and `ai_category_estimation` of every
 * lead, one spelling per name ignoring case: the most used one) when it is older than `maxAgeMs`
 * or was never built. One process rebuilds at a time (an advisory lock); readers keep seeing the
 * previous catalogue until the new one commits.
 */
export async function ensureCatalog(db: Db, maxAgeMs = CATALOG_MAX_AGE_MS): Promise<void> {
  if (await isFresh(db, maxAgeMs)) return;
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtextextended('ai:category-catalog', 0))`.execute(trx);
    if (await isFresh(trx, maxAgeMs)) return; // another process just rebuilt it
    await sql`delete from ai_categories`.execute(trx);
    await sql`
      insert into ai_categories (name, lead_count)
      select mode() within group (order by n), count(*)::int
      from (
        select btrim(category) as n from leads where category is not null
        union all
        select btrim(c) from leads cross join lateral unnest(ai_category_estimation) as c
        where ai_category_estimation is not null
      ) as names
      where n <> '' and length(n) <= ${NAME_MAX_LENGTH}
      group by lower(n)
      order by count(*) desc, lower(n)
      limit ${CATALOG_SIZE}`.execute(trx);
    await sql`
      insert into ai_category_catalog (id, built_at) values (true, now())
      on conflict (id) do update set built_at = excluded.built_at`.execute(trx);
  });
}

async function isFresh(db: DbOrTrx, maxAgeMs: number): Promise<boolean> {
  const row = await db.selectFrom("ai_category_catalog").select("built_at").executeTakeFirst();
  return row !== undefined && Date.now() - row.built_at.getTime() < maxAgeMs;
}

/**
 * The stemmed words of every catalogue name, each weighted by how rare it is among the names
 * (1 / the number of names holding it): "repair" in "Auto Repair", "Storm Damage Repair" and "Air
 * Conditioning Repair" says less about a text than "plumb" does.
 */
const NAME_WORDS = sql`
  name_words as (
    select c.name, l.word, 1.0 / count(*) over (partition by l.word) as weight
    from ai_categories as c cross join lateral unnest(tsvector_to_array(c.search)) as l(word)
  )`;

/**
 * How well one stemmed word `w.word` of a name is found in the text `q`: 1 when the text holds it
 * (full text), else its trigram word similarity in the text when at least 0.5 (another form of
 * the word: "plumber" in a text about plumbing), else 0.
 */
const WORD_MATCH = sql`(
  case when w.word = any(q.lex) then 1.0
  else (select case when s >= 0.5 then s else 0 end from word_similarity(w.word, q.text) as s)
  end
)`;

/**
 * Every catalogue name ranked against `text`, best first, ties by how many leads carry it; names
 * in `exclude` (ignoring case) left out. The score is the share of the name's stemmed words found
 * in the text, each word weighted by its rarity among the names and counted by how well it is
 * found (WORD_MATCH: full text, else trigram similarity).
 */
export async function rankCategories(
  db: DbOrTrx,
  text: string,
  options: { exclude?: readonly string[]; limit: number },
): Promise<RankedCategory[]> {
  const exclude = (options.exclude ?? []).map((name) => name.trim().toLowerCase());
  const result = await sql<{ name: string; lead_count: number; score: number }>`
    with q as (
      select lower(${text}::text) as text, tsvector_to_array(to_tsvector('english', ${text}::text)) as lex
    ),
    ${NAME_WORDS},
    coverage as (
      select w.name, sum(w.weight * ${WORD_MATCH}) / sum(w.weight) as share
      from name_words as w cross join q
      group by w.name
    )
    select c.name, c.lead_count, coalesce(coverage.share, 0) as score
    from ai_categories as c
    cross join q
    left join coverage on coverage.name = c.name
    where lower(c.name) <> all(${exclude}::text[])
    order by score desc, c.lead_count desc, c.name
    limit ${options.limit}`.execute(db);
  return result.rows.map((row) => ({ name: row.name, leadCount: row.lead_count, score: Number(row.score) }));
}

/**
 * For each text of a batch (a lead's name, category and description), the best `perText`
 * catalogue names sharing at least one stemmed word with it (found through the full-text index
 * of the catalogue, so a batch stays cheap), best first, scored as in rankCategories but on full
 * text alone: the trigram similarity of every word of every candidate was most of a batch's time
 * (docs/performance.md), and a lead's own category usually names its trade.
 */
export async function rankCategoriesForTexts(
  db: DbOrTrx,
  texts: readonly { id: number; text: string }[],
  perText: number,
): Promise<Map<number, RankedCategory[]>> {
  const ranked = new Map<number, RankedCategory[]>();
  if (texts.length === 0) return ranked;
  const result = await sql<{ id: number; name: string; lead_count: number; score: number }>`
    with input as (
      select * from unnest(${texts.map((t) => t.id)}::int[], ${texts.map((t) => t.text)}::text[]) as t(id, text)
    ),
    q as (
      select id, lower(text) as text, tsvector_to_array(to_tsvector('english', text)) as lex from input
    ),
    pairs as (
      select q.id, c.name, c.lead_count
      from q
      cross join lateral (
        select array_to_string(array(select quote_literal(l) from unnest(q.lex) as l), ' | ') as terms
      ) as query
      join ai_categories as c on query.terms <> '' and c.search @@ query.terms::tsquery
    ),
    ${NAME_WORDS},
    scored as (
      select p.id, p.name, p.lead_count,
        sum(w.weight) filter (where w.word = any(q.lex)) / sum(w.weight) as score
      from pairs as p
      join q on q.id = p.id
      join name_words as w on w.name = p.name
      group by p.id, p.name, p.lead_count
    )
    select id, name, lead_count, score from (
      select *, row_number() over (partition by id order by score desc, lead_count desc, name) as position
      from scored
    ) as ranked
    where position <= ${perText}
    order by id, position`.execute(db);
  for (const row of result.rows) {
    const list = ranked.get(row.id) ?? [];
    list.push({ name: row.name, leadCount: row.lead_count, score: Number(row.score) });
    ranked.set(row.id, list);
  }
  return ranked;
}

/** The catalogue spelling of each name (compared ignoring case); unknown names are absent. */
export async function catalogNames(db: DbOrTrx, names: readonly string[]): Promise<Map<string, string>> {
  const known = new Map<string, string>();
  if (names.length === 0) return known;
  const rows = await db
    .selectFrom("ai_categories")
    .select("name")
    .where(sql<boolean>`lower(name) = any(${names.map((n) => n.trim().toLowerCase())}::text[])`)
    .execute();
  for (const row of rows) known.set(row.name.toLowerCase(), row.name);
  return known;
}
