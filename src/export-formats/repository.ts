import type { Selectable } from "kysely";
import type { DbOrTrx, Trx } from "../db/database.js";
import type { ExportFormatsTable } from "../db/schema/exports.js";
import type { ExportFormat, ExportFormatFields } from "./format.js";

function toExportFormat(row: Selectable<ExportFormatsTable>): ExportFormat {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    fileType: row.file_type,
    startRow: row.start_row,
    fieldMappings: row.field_mappings,
    isDefault: row.is_default,
    splitFiles: row.split_files,
    splitMode: row.split_mode,
    maxRowsPerFile: row.max_rows_per_file,
    numberOfParts: row.number_of_parts,
    includeTotal: row.include_total,
    includeHeaders: row.include_headers,
    databaseType: row.database_type,
    combinedAssigneeColumnName: row.combined_assignee_column_name,
    combinedFileNameColumnName: row.combined_file_name_column_name,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toColumns(fields: ExportFormatFields) {
  return {
    name: fields.name,
    file_type: fields.fileType,
    start_row: fields.startRow,
    field_mappings: JSON.stringify(fields.fieldMappings),
    split_files: fields.splitFiles,
    split_mode: fields.splitMode,
    max_rows_per_file: fields.maxRowsPerFile,
    number_of_parts: fields.numberOfParts,
    include_total: fields.includeTotal,
    include_headers: fields.includeHeaders,
    combined_assignee_column_name: fields.combinedAssigneeColumnName,
    combined_file_name_column_name: fields.combinedFileNameColumnName,
  };
}

/** The account's formats, oldest first. */
export async function listFormats(db: DbOrTrx, accountId: number): Promise<ExportFormat[]> {
  const rows = await db
    .selectFrom("export_formats")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("id")
    .execute();
  return rows.map(toExportFormat);
}

/** One format of the account (undefined for another account's or an unknown id). */
export async function findFormat(
  db: DbOrTrx,
  accountId: number,
  id: number,
): Promise<ExportFormat | undefined> {
  const row = await db
    .selectFrom("export_formats")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row && toExportFormat(row);
}

/** The account's default format, if it has one. */
export async function findDefaultFormat(db: DbOrTrx, accountId: number): Promise<ExportFormat | undefined> {
  const row = await db
    .selectFrom("export_formats")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("is_default", "=", true)
    .executeTakeFirst();
  return row && toExportFormat(row);
}

export async function insertFormat(
  db: DbOrTrx,
  accountId: number,
  fields: ExportFormatFields,
): Promise<ExportFormat> {
  const row = await db
    .insertInto("export_formats")
    .values({ account_id: accountId, ...toColumns(fields), updated_at: new Date() })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toExportFormat(row);
}

/** Replaces the writable fields; undefined when the format is not the account's. */
export async function updateFormat(
  db: DbOrTrx,
  accountId: number,
  id: number,
  fields: ExportFormatFields,
): Promise<ExportFormat | undefined> {
  const row = await db
    .updateTable("export_formats")
    .set({ ...toColumns(fields), updated_at: new Date() })
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
  return row && toExportFormat(row);
}

/** Deletes the format; false when it is not the account's. */
export async function deleteFormat(db: DbOrTrx, accountId: number, id: number): Promise<boolean> {
  const result = await db
    .deleteFrom("export_formats")
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Locks the account row: serialises default changes of one account. */
export async function lockAccount(trx: Trx, accountId: number): Promise<void> {
  await trx.selectFrom("accounts").select("id").where("id", "=", accountId).forUpdate().executeTakeFirst();
}

/** Makes `id` the only default of the account (call after lockAccount, in the same transaction). */
export async function setOnlyDefault(trx: Trx, accountId: number, id: number): Promise<void> {
  await trx
    .updateTable("export_formats")
    .set({ is_default: false, updated_at: new Date() })
    .where("account_id", "=", accountId)
    .where("is_default", "=", true)
    .where("id", "<>", id)
    .execute();
  await trx
    .updateTable("export_formats")
    .set({ is_default: true, updated_at: new Date() })
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .where("is_default", "=", false)
    .execute();
}
