import { sql, type RawBuilder, type SqlBool } from "kysely";
import { csvCopy, textRows, type DbOrTrx, type Trx } from "../../db/database.js";
import { integerArray, integerArrayLiteral, integerSet } from "../../db/integer-array.js";
import { encodingOf, type CellEncoding, type Column, type ExportRow } from "../../export-files/columns.js";
import { csvLinesFromCopy, type CsvLines } from "../../export-files/csv-lines.js";
import type { ExportFileType } from "../../export-files/format.js";
import type { RowBatch } from "../../export-files/writer.js";
import type { SearchFilters } from "../../leads/search/filters.js";
import { leadsMatchTable, matchTable, type MatchTable } from "../../leads/search/query.js";
import type { Candidate } from "./selection.js";
import { cellSql } from "./cell-sql.js";

/**
 * Candidates fetched per round trip. Small enough that a batch's parsed rows die young: batches of
 * 20,000 lived long enough to be promoted, 13 MB of old-space garbage per 100,000-lead export.
 */
const CANDIDATE_BATCH = 5_000;
/** Ids per statement when reading or writing many leads. */
export const ID_CHUNK = 1_000;
/**
 * Leads read per statement while writing the files. With 2,500, a 100,000-lead JSON export was
 * answered 6-9% faster on average than with 1,000 (docs/performance.md, 2026-12-07). At 5,000 the
 * plan became a merge join over the whole `leads_pkey` of 100,000 leads: 1.4 s for all the
 * statements, against 0.8-1.1 s.
 */
export const LEAD_CHUNK = 2_500;
/** Batches of leads being read while one is written (each on its own pooled connection). */
const READ_AHEAD = 1;

/** Splits a list into chunks of `size`. */
export function chunks<T>(items: readonly T[], size = ID_CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** How the candidates of an export are ordered and narrowed. */
export interface CandidateQuery {
  accountId: number;
  /** The search (with `selectedIds`: only its sort is used). */
  filters: SearchFilters;
  /** Exactly these leads instead of the search's matches; null for the search. */
  selectedIds: readonly number[] | null;
  /** New leads before previously exported ones. */
  newFirst: boolean;
  /** Only leads the account already received (`maxCredits: 0`). */
  onlyReceived: boolean;
  /** Only leads the account has not received (`excludePurchased`). */
  onlyNew: boolean;
  /** Read the leads' URLs too (to check them against a blacklist). */
  withUrls: boolean;
  /** false: read the matches from `leads` even where `lead_search` serves the search (tests). */
  useSearchTable?: boolean;
}

/**
 * Where the candidates are read: the search's matches (from `lead_search` when it serves the
 * search: a narrow table, a fraction of the pages of `leads`), or the selected ids.
 */
function candidateSource(query: CandidateQuery): MatchTable {
  if (!query.selectedIds) return matchTable(query.filters, query.useSearchTable);
  return leadsMatchTable(query.filters, sql<SqlBool>`leads.id in ${integerSet(query.selectedIds)}`);
}

/** Reservoir leads first, then (when asked) new before received, then the sort, the id breaking ties. */
function candidateOrder(query: CandidateQuery, source: MatchTable): RawBuilder<unknown> {
  const dir = query.filters.sortOrder === "asc" ? sql`asc` : sql`desc`;
  const groups = query.newFirst ? sql`reserved desc, received asc,` : sql`reserved desc,`;
  return sql`${groups} ${source.sortKey} ${dir} nulls last, ${source.id} ${dir}`;
}

/** Which candidates are kept: the source's condition, and received or new ones only when asked. */
function candidateCondition(query: CandidateQuery, source: MatchTable): RawBuilder<unknown> {
  const received = query.onlyReceived ? sql` and h.lead_id is not null` : sql``;
  const fresh = query.onlyNew ? sql` and h.lead_id is null` : sql``;
  return sql`${source.condition}${received}${fresh}`;
}

/**
 * Every lead matching the export's filters (or of its selected ids), in export order, with whether
 * the account received it and whether it is in the account's lead reservoir (and its URLs when
 * asked), read through a cursor in batches (memory stays flat however many leads match). Needs a
 * transaction (the cursor lives in it, with the search's settings: tuneSearch,
 * src/leads/search/settings.ts) and must be its last use of the name `export_candidates`; stop
 * iterating early when enough leads were taken.
 */
export async function* streamCandidates(trx: Trx, query: CandidateQuery): AsyncGenerator<Candidate[]> {
  const source = candidateSource(query);
  const urls = query.withUrls ? sql`leads.registered_url, leads.crawled_url` : sql`null, null`;
  // lead_search has no URL columns: they are read from the lead.
  const urlsFrom = query.withUrls && source.searchTable ? sql`join leads on leads.id = ${source.id}` : sql``;
  await sql`
    declare export_candidates no scroll cursor for
    select ${source.id}, (h.lead_id is not null) as received, (r.lead_id is not null) as reserved, ${urls}
    from ${source.table}
    ${urlsFrom}
    left join lead_export_history h on h.account_id = ${query.accountId} and h.lead_id = ${source.id}
    left join lead_reservoir r
      on r.account_id = ${query.accountId} and r.lead_id = ${source.id} and r.expires_at > now()
    where ${candidateCondition(query, source)}
    order by ${candidateOrder(query, source)}`.execute(trx);
  // The cursor closes with the transaction, also when the caller stops early.
  for (;;) {
    // Unparsed text rows: id, received, reserved ('t' / 'f'), registered URL, crawled URL.
    const { rows } = await textRows(
      sql`fetch forward ${sql.lit(CANDIDATE_BATCH)} from export_candidates`,
    ).execute(trx);
    yield rows.map((row) => ({
      id: Number(row[0]),
      received: row[1] === "t",
      reserved: row[2] === "t",
      registeredUrl: row[3] ?? null,
      crawledUrl: row[4] ?? null,
    }));
    if (rows.length < CANDIDATE_BATCH) return;
  }
}

/** `from ... order by` of the leads (aliased `l`) with the ids of an integer array, in its order. */
function fromLeadsInOrder(ids: RawBuilder<number[]>): RawBuilder<unknown> {
  return sql`from unnest(${ids}) with ordinality as u(id, ord)
    join leads l on l.id = u.id
    order by u.ord`;
}

/** Throws when some leads of a batch were not found (deleted since they were selected). */
function assertAllFound(wanted: number, found: number): void {
  if (found !== wanted) {
    throw new Error(`${wanted - found} leads of the export were deleted while exporting`);
  }
}

/**
 * The export rows of the leads with these ids, in the order of `ids` (one array parameter, so one
 * cheap statement): one encoded value per column (see cellSql), read as unparsed text.
 */
export async function findExportRows(
  db: DbOrTrx,
  ids: readonly number[],
  columns: readonly Column[],
  encoding: CellEncoding,
): Promise<ExportRow[]> {
  if (ids.length === 0) return [];
  const cells = columns.length > 0 ? sql.join(columns.map((column) => cellSql(column, encoding))) : sql`1`;
  const { rows } = await textRows(sql`select ${cells} ${fromLeadsInOrder(integerArray(ids))}`).execute(db);
  assertAllFound(ids.length, rows.length);
  return columns.length > 0 ? rows : rows.map(() => []);
}

/**
 * The finished CSV lines of the leads with these ids, in the order of `ids`: PostgreSQL renders
 * the `text`-encoded cells as CSV (COPY), finished by csvLinesFromCopy. The ids are inlined as
 * one literal (COPY takes no parameters); they are integers the export selected.
 */
export async function findCsvLines(
  db: DbOrTrx,
  ids: readonly number[],
  columns: readonly Column[],
): Promise<CsvLines> {
  const cells = columns.map((column) => {
    const cell = cellSql(column, "text");
    // An empty text is written like a missing one (COPY would quote it as "").
    return column.kind === "text" ? sql`nullif(${cell}, '')` : cell;
  });
  const { rows } = await csvCopy(
    sql`select ${sql.join(cells)} ${fromLeadsInOrder(integerArrayLiteral(ids))}`,
  ).execute(db);
  const lines = csvLinesFromCopy(rows[0]![0], columns);
  assertAllFound(ids.length, lines.length);
  return lines;
}

/**
 * The export's leads in this order, in batches of `chunkSize` (LEAD_CHUNK): finished CSV lines for
 * a CSV file (findCsvLines), rows in the file type's encoding otherwise (findExportRows). Up to
 * `READ_AHEAD` batches are requested ahead of the one being written, so the database and the file
 * writer work side by side.
 */
export async function* streamExportBatches(
  db: DbOrTrx,
  ids: readonly number[],
  columns: readonly Column[],
  fileType: ExportFileType,
  chunkSize = LEAD_CHUNK,
): AsyncGenerator<RowBatch> {
  const read = (part: number[]): Promise<RowBatch> =>
    fileType === "csv" && columns.length > 0
      ? findCsvLines(db, part, columns)
      : findExportRows(db, part, columns, encodingOf(fileType));
  const parts = chunks(ids, chunkSize);
  const pending: Promise<RowBatch>[] = [];
  let requested = 0;
  const request = () => {
    while (requested < parts.length && pending.length < READ_AHEAD + 1) {
      const batch = read(parts[requested]!);
      // A failed read surfaces when it is awaited; until then keep it from being unhandled.
      batch.catch(() => undefined);
      pending.push(batch);
      requested += 1;
    }
  };
  request();
  while (pending.length > 0) {
    const current = await pending.shift()!;
    request();
    yield current;
  }
}

/** Removes exported leads from the account's lead reservoir (one statement). */
export async function removeFromReservoir(trx: Trx, accountId: number, leadIds: readonly number[]) {
  if (leadIds.length === 0) return;
  await trx
    .deleteFrom("lead_reservoir")
    .where("account_id", "=", accountId)
    .where(sql<boolean>`lead_id in ${integerSet(leadIds)}`)
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
    from unnest(${integerArray(leadIds)}) as u(lead_id)
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
