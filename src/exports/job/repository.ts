import { sql, type RawBuilder } from "kysely";
import type { DbOrTrx, Trx } from "../../db/database.js";
import type { LeadRecord } from "../../leads/lead.js";
import { LEAD_RECORD_COLUMNS, leadRecordFromRow } from "../../leads/repository.js";
import type { SearchFilters } from "../../leads/search/filters.js";
import { searchCondition, sortColumn } from "../../leads/search/query.js";
import type { Candidate } from "./selection.js";

/** Candidates fetched per round trip. */
const CANDIDATE_BATCH = 5_000;
/** Ids per statement when reading or writing many leads. */
export const ID_CHUNK = 1_000;
/** Leads read per statement while writing the files and recording them. */
export const LEAD_CHUNK = 1_000;

/** Splits a list into chunks of `size`. */
export function chunks<T>(items: readonly T[], size = ID_CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** How the candidates of an export are ordered and narrowed. */
export interface CandidateQuery {
  accountId: number;
  filters: SearchFilters;
  /** New leads before previously exported ones. */
  newFirst: boolean;
  /** Only leads the account already received (`maxCredits: 0`). */
  onlyReceived: boolean;
}

/** Reservoir leads first, then (when asked) new before received, then the sort, the id breaking ties. */
function candidateOrder(query: CandidateQuery): RawBuilder<unknown> {
  const dir = query.filters.sortOrder === "asc" ? sql`asc` : sql`desc`;
  const groups = query.newFirst ? sql`reserved desc, received asc,` : sql`reserved desc,`;
  return sql`${groups} ${sortColumn(query.filters)} ${dir} nulls last, leads.id ${dir}`;
}

/**
 * Every lead matching the export's filters, in export order, with whether the account received it
 * and whether it is in the account's lead reservoir, read through a cursor in batches (memory
 * stays flat however many leads match). Needs a transaction (the cursor lives in it) and must be
 * its last use of the name `export_candidates`; stop iterating early when enough leads were taken.
 */
export async function* streamCandidates(trx: Trx, query: CandidateQuery): AsyncGenerator<Candidate> {
  const received = sql`(h.lead_id is not null)`;
  await sql`
    declare export_candidates no scroll cursor for
    select leads.id, ${received} as received, (r.lead_id is not null) as reserved,
      leads.registered_url, leads.crawled_url
    from leads
    left join lead_export_history h on h.account_id = ${query.accountId} and h.lead_id = leads.id
    left join lead_reservoir r
      on r.account_id = ${query.accountId} and r.lead_id = leads.id and r.expires_at > now()
    where ${searchCondition(query.filters)} ${query.onlyReceived ? sql`and h.lead_id is not null` : sql``}
    order by ${candidateOrder(query)}`.execute(trx);
  // The cursor closes with the transaction, also when the caller stops early.
  for (;;) {
    const { rows } = await sql<{
      id: number;
      received: boolean;
      reserved: boolean;
      registered_url: string | null;
      crawled_url: string | null;
    }>`fetch forward ${sql.lit(CANDIDATE_BATCH)} from export_candidates`.execute(trx);
    for (const row of rows) {
      yield {
        id: row.id,
        received: row.received,
        reserved: row.reserved,
        registeredUrl: row.registered_url,
        crawledUrl: row.crawled_url,
      };
    }
    if (rows.length < CANDIDATE_BATCH) return;
  }
}

/**
 * The leads with these ids, in the order of `ids` (one array parameter, so one cheap statement).
 * With `columns`, only those columns are read: the record's other properties are then missing
 * (undefined), and the lead's fields that depend on them are not its true values.
 */
export async function findLeadRecords(
  db: DbOrTrx,
  ids: readonly number[],
  columns?: ReadonlySet<string>,
): Promise<LeadRecord[]> {
  if (ids.length === 0) return [];
  const select = columns ? LEAD_RECORD_COLUMNS.filter((column) => columns.has(column)) : LEAD_RECORD_COLUMNS;
  const rows = await db
    .selectFrom("leads")
    // Typed as every column: leadRecordFromRow reads a missing one as undefined.
    .select(select as typeof LEAD_RECORD_COLUMNS)
    .where(sql<boolean>`leads.id = any(cast(${[...ids]} as integer[]))`)
    .execute();
  const byId = new Map(rows.map((row) => [row.id, leadRecordFromRow(row)]));
  return ids.map((id) => {
    const lead = byId.get(id);
    if (!lead) throw new Error(`lead ${id} of the export was deleted while exporting`);
    return lead;
  });
}

/**
 * The leads with these ids in this order, read in chunks (only `columns`, when given; see
 * findLeadRecords); the next chunk is read while the current one is consumed, so the database
 * and the file writer work side by side.
 */
export async function* streamLeads(
  db: DbOrTrx,
  ids: readonly number[],
  columns?: ReadonlySet<string>,
): AsyncGenerator<LeadRecord[]> {
  const parts = chunks(ids, LEAD_CHUNK);
  const read = (part: number[]) => findLeadRecords(db, part, columns);
  let next = parts.length > 0 ? read(parts[0]!) : undefined;
  for (let i = 0; i < parts.length; i += 1) {
    const current = await next!;
    next = i + 1 < parts.length ? read(parts[i + 1]!) : undefined;
    // A failed read-ahead surfaces when it is awaited; until then keep it from being unhandled.
    next?.catch(() => undefined);
    yield current;
  }
}

/** Removes exported leads from the account's lead reservoir (one statement). */
export async function removeFromReservoir(trx: Trx, accountId: number, leadIds: readonly number[]) {
  if (leadIds.length === 0) return;
  await trx
    .deleteFrom("lead_reservoir")
    .where("account_id", "=", accountId)
    .where(sql<boolean>`lead_id = any(cast(${[...leadIds]} as integer[]))`)
    .execute();
}

/**
 * Puts leads into the account's lead reservoir in one statement (an entry already there gets the
 * new expiry). Rows go in lead id order, so two exports of overlapping leads never deadlock.
 */
export async function addToReservoir(
  trx: Trx,
  accountId: number,
  leadIds: readonly number[],
  expiresAt: Date,
): Promise<void> {
  if (leadIds.length === 0) return;
  await sql`
    insert into lead_reservoir (account_id, lead_id, added_at, expires_at)
    select ${accountId}, u.lead_id, now(), ${expiresAt}
    from unnest(cast(${[...leadIds]} as integer[])) as u(lead_id)
    order by u.lead_id
    on conflict (account_id, lead_id) do update set
      added_at = excluded.added_at,
      expires_at = excluded.expires_at`.execute(trx);
}

/** Removes the account's reservoir entries past their expiry. */
export async function deleteExpiredReservoir(trx: Trx, accountId: number): Promise<void> {
  await trx
    .deleteFrom("lead_reservoir")
    .where("account_id", "=", accountId)
    .where("expires_at", "<=", new Date())
    .execute();
}
