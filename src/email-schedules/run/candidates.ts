import { sql } from "kysely";
import { textRows, type DbOrTrx, type Trx } from "../../db/database.js";
import type { SearchFilters } from "../../leads/search/filters.js";
import { searchCondition, sortColumn } from "../../leads/search/query.js";

/** A matching lead a send may take, in send order. */
export interface SendCandidate {
  id: number;
  /** The account already received the lead (free: the sticky rule). */
  received: boolean;
  registeredUrl: string | null;
  crawledUrl: string | null;
}

/** What a send considers. */
export interface CandidateQuery {
  accountId: number;
  scheduleId: number;
  filters: SearchFilters;
  /** Leads above it are new to the schedule; null: the first run (every lead is). */
  watermarkLeadId: number | null;
  /** The highest lead id of the run's snapshot: later leads wait for the next run. */
  maxLeadId: number;
  limit: number;
  /** Read the leads' URLs (to check them against a blacklist). */
  withUrls: boolean;
}

/** The highest lead id now (null when there are no leads). */
export async function findMaxLeadId(db: DbOrTrx): Promise<number | null> {
  const row = await db
    .selectFrom("leads")
    .select((eb) => eb.fn.max("id").as("max"))
    .executeTakeFirst();
  return row?.max ?? null;
}

/**
 * The leads a send considers, in send order, at most `limit`: the schedule's reservoir first (in
 * its order), then the leads new to the schedule (id above the watermark, up to `maxLeadId`) by
 * the preset's sort; all still matching the preset's filters. Read as unparsed text rows.
 */
export async function findSendCandidates(trx: Trx, query: CandidateQuery): Promise<SendCandidate[]> {
  const dir = query.filters.sortOrder === "asc" ? sql`asc` : sql`desc`;
  const newToSchedule = query.watermarkLeadId === null ? sql`true` : sql`leads.id > ${query.watermarkLeadId}`;
  const urls = query.withUrls ? sql`leads.registered_url, leads.crawled_url` : sql`null, null`;
  const { rows } = await textRows(sql`
    select leads.id, (h.lead_id is not null), ${urls}
    from leads
    left join lead_export_history h on h.account_id = ${query.accountId} and h.lead_id = leads.id
    left join email_schedule_reservoir r on r.schedule_id = ${query.scheduleId} and r.lead_id = leads.id
    where ${searchCondition(query.filters)}
      and leads.id <= ${query.maxLeadId}
      and (r.lead_id is not null or ${newToSchedule})
    order by r.position asc nulls last, ${sortColumn(query.filters)} ${dir} nulls last, leads.id ${dir}
    limit ${query.limit}`).execute(trx);
  return rows.map((row) => ({
    id: Number(row[0]),
    received: row[1] === "t",
    registeredUrl: row[2] ?? null,
    crawledUrl: row[3] ?? null,
  }));
}
