import { sql, type RawBuilder } from "kysely";
import { csvCopy, textRows, type DbOrTrx } from "../db/database.js";
import { encodingOf, type Column, type ExportRow } from "../export-files/columns.js";
import { csvLinesFromCopy, type CsvLines } from "../export-files/csv-lines.js";
import type { ExportFileType } from "../export-files/format.js";
import type { RowBatch } from "../export-files/writer.js";
import { cellSql } from "../exports/job/cell-sql.js";
import { LEAD_FIELDS } from "../leads/fields.js";
import { LEAD_RECORD_COLUMNS } from "../leads/repository.js";

/** Entries read per statement while writing a file. */
const ENTRY_CHUNK = 1_000;

/** Most key-value pairs of one `jsonb_build_object` call (PostgreSQL takes at most 100 arguments). */
const PAIRS_PER_CALL = 50;

/**
 * A copied snapshot of an older entry (`lead_snapshot`, database-style or camelCase keys) as the
 * JSON of a `leads` row: one member per column of the catalogue, read from the alias or the API
 * name (several `jsonb_build_object` calls joined by `||`).
 */
function copiedSnapshotAsRow(snapshot: RawBuilder<unknown>): RawBuilder<unknown> {
  const seen = new Set<string>();
  const members: RawBuilder<unknown>[] = [];
  for (const field of LEAD_FIELDS) {
    if (!field.column || field.column === "id" || seen.has(field.column)) continue;
    seen.add(field.column);
    const names = LEAD_FIELDS.filter((f) => f.column === field.column).flatMap((f) => [f.alias, f.name]);
    const value = sql.join(
      names.map((n) => sql`${snapshot} -> ${sql.lit(n)}`),
      sql`, `,
    );
    members.push(sql`${sql.lit(field.column)}::text, coalesce(${value})`);
  }
  const calls: RawBuilder<unknown>[] = [];
  for (let at = 0; at < members.length; at += PAIRS_PER_CALL) {
    calls.push(sql`jsonb_build_object(${sql.join(members.slice(at, at + PAIRS_PER_CALL))})`);
  }
  return sql`(${sql.join(calls, sql` || `)})`;
}

/** The columns the cell encoders read, from a row aliased `alias`. */
function columnsOfRow(alias: string): RawBuilder<unknown> {
  return sql.join(LEAD_RECORD_COLUMNS.map((c) => sql.ref(`${alias}.${c}`)));
}

/**
 * Each entry's lead data as a `leads` row (aliased `l`), in the order of `entryIds`: the copy stored
 * with an older entry, else the version it names (current, or kept in `lead_versions`), else the
 * live lead; entries with none of these are left out. Each source is its own branch of a
 * `union all`, so the usual case (the current version) is a plain join. Literals only (no
 * parameters), so COPY can run it; the ids are integers checked by the caller.
 */
function entryLeadsInOrder(accountId: number, entryIds: readonly number[]): RawBuilder<unknown> {
  const ids = sql.lit(`{${entryIds.join(",")}}`);
  const current = sql`exists (select 1 from leads x where x.id = e.lead_id and x.version = e.lead_version)`;
  const kept = sql`exists (select 1 from lead_versions x where x.id = e.lead_id and x.version = e.lead_version)`;
  return sql`from (
      with e as materialized (
        select s.ord, h.lead_id, h.lead_version, h.lead_snapshot
        from unnest(cast(${ids} as integer[])) with ordinality as s(id, ord)
        join lead_export_history h on h.id = s.id and h.account_id = ${sql.lit(accountId)}
      )
      select e.ord, ${columnsOfRow("c")} from e
        join leads c on c.id = e.lead_id and c.version = e.lead_version
        where e.lead_snapshot is null
      union all
      select e.ord, ${columnsOfRow("v")} from e
        join lead_versions v on v.id = e.lead_id and v.version = e.lead_version
        where e.lead_snapshot is null and not ${current}
      union all
      select e.ord, ${columnsOfRow("r")} from e
        cross join lateral jsonb_populate_record(null::leads,
          ${copiedSnapshotAsRow(sql`e.lead_snapshot`)} || jsonb_build_object('id', e.lead_id)) as r
        where e.lead_snapshot is not null
      union all
      select e.ord, ${columnsOfRow("c")} from e
        join leads c on c.id = e.lead_id
        where e.lead_snapshot is null and (e.lead_version is null or not (${current} or ${kept}))
    ) l
    order by l.ord`;
}

function assertIntegers(accountId: number, ids: readonly number[]): void {
  if (!Number.isSafeInteger(accountId) || !ids.every((id) => Number.isSafeInteger(id))) {
    throw new Error("account and entry ids must be integers");
  }
}

/** Rows of the entries in the encoding of a file type (see cellSql), read as unparsed text. */
async function entryRows(
  db: DbOrTrx,
  accountId: number,
  entryIds: readonly number[],
  columns: readonly Column[],
  fileType: ExportFileType,
): Promise<ExportRow[]> {
  const encoding = encodingOf(fileType);
  const cells = columns.length > 0 ? sql.join(columns.map((c) => cellSql(c, encoding))) : sql`1`;
  const { rows } = await textRows(sql`select ${cells} ${entryLeadsInOrder(accountId, entryIds)}`).execute(db);
  return columns.length > 0 ? rows : rows.map(() => []);
}

/** Finished CSV lines of the entries (PostgreSQL's COPY, as the export reads them). */
async function entryCsvLines(
  db: DbOrTrx,
  accountId: number,
  entryIds: readonly number[],
  columns: readonly Column[],
): Promise<CsvLines> {
  const cells = columns.map((column) => {
    const cell = cellSql(column, "text");
    return column.kind === "text" ? sql`nullif(${cell}, '')` : cell;
  });
  const { rows } = await csvCopy(
    sql`select ${sql.join(cells)} ${entryLeadsInOrder(accountId, entryIds)}`,
  ).execute(db);
  return csvLinesFromCopy(rows[0]![0], columns);
}

/**
 * The file rows of the account's entries, in the order of `entryIds` (entries with lead data only:
 * see entriesWithLeadData), in batches of 1,000, through the same cell encoders as an export
 * (src/exports/job/cell-sql.ts). Throws when a batch comes back short (an entry lost its data).
 */
export async function* streamEntryRows(
  db: DbOrTrx,
  accountId: number,
  entryIds: readonly number[],
  columns: readonly Column[],
  fileType: ExportFileType,
): AsyncGenerator<RowBatch> {
  assertIntegers(accountId, entryIds);
  for (let at = 0; at < entryIds.length; at += ENTRY_CHUNK) {
    const part = entryIds.slice(at, at + ENTRY_CHUNK);
    const batch =
      fileType === "csv" && columns.length > 0
        ? await entryCsvLines(db, accountId, part, columns)
        : await entryRows(db, accountId, part, columns, fileType);
    if (batch.length !== part.length) {
      throw new Error(`${part.length - batch.length} entries lost their lead data while exporting`);
    }
    yield batch;
  }
}

/**
 * Which of the account's entries among `entryIds` have lead data (a copied snapshot, the version
 * they name, or a live lead), in the order of `entryIds`, with their database types.
 */
export async function entriesWithLeadData(
  db: DbOrTrx,
  accountId: number,
  entryIds: readonly number[],
): Promise<{ id: number; databaseType: string }[]> {
  if (entryIds.length === 0) return [];
  const { rows } = await sql<{ id: number; database_type: string }>`
    select h.id, h.database_type
    from unnest(cast(${[...entryIds]} as integer[])) with ordinality as s(id, ord)
    join lead_export_history h on h.id = s.id and h.account_id = ${accountId}
    where h.lead_snapshot is not null
      or exists (select 1 from leads c where c.id = h.lead_id)
      or exists (select 1 from lead_versions v where v.id = h.lead_id and v.version = h.lead_version)
    order by s.ord`.execute(db);
  return rows.map((r) => ({ id: r.id, databaseType: r.database_type }));
}
