import type { Db, DbOrTrx } from "../db/database.js";
import { errors } from "../http/errors.js";
import { CREATE_DEFAULTS, WRITABLE_FIELDS, type ExportFormat, type ExportFormatFields } from "./format.js";
import {
  deleteFormat,
  findDefaultFormat,
  findFormat,
  insertFormat,
  listFormats,
  lockAccount,
  setOnlyDefault,
  updateFormat,
} from "./repository.js";
import { checkFormatFields } from "./rules.js";

/** A create body (already checked against the contract): required fields plus optional ones. */
export type NewFormatInput = Pick<ExportFormatFields, "name" | "fileType" | "fieldMappings"> &
  Partial<ExportFormatFields>;

/** The account's formats, oldest first. */
export async function listExportFormats(db: DbOrTrx, accountId: number): Promise<ExportFormat[]> {
  return listFormats(db, accountId);
}

/** One format of the account; 404 otherwise. */
export async function getExportFormat(db: DbOrTrx, accountId: number, id: number): Promise<ExportFormat> {
  const format = await findFormat(db, accountId, id);
  if (!format) throw errors.notFound("Export format not found.");
  return format;
}

/** Creates a format (never the default) after checking every rule. */
export async function createExportFormat(
  db: DbOrTrx,
  accountId: number,
  input: NewFormatInput,
): Promise<ExportFormat> {
  const fields: ExportFormatFields = {
    ...CREATE_DEFAULTS,
    name: input.name,
    fileType: input.fileType,
    fieldMappings: input.fieldMappings,
  };
  for (const key of WRITABLE_FIELDS) {
    if (input[key] !== undefined) (fields as unknown as Record<string, unknown>)[key] = input[key];
  }
  return insertFormat(db, accountId, checkFormatFields(fields));
}

/**
 * Applies the writable fields sent (others ignored) to the stored format and checks the rules on
 * the result. 400 `bad_request` when none is sent; 404 for another account's format.
 */
export async function updateExportFormat(
  db: Db,
  accountId: number,
  id: number,
  body: Record<string, unknown>,
): Promise<ExportFormat> {
  const sent = WRITABLE_FIELDS.filter((key) => body[key] !== undefined);
  if (sent.length === 0) throw errors.badRequest(`Send at least one of: ${WRITABLE_FIELDS.join(", ")}.`);
  return db.transaction().execute(async (trx) => {
    const stored = await findFormat(trx, accountId, id);
    if (!stored) throw errors.notFound("Export format not found.");
    const merged: ExportFormatFields = {
      name: stored.name,
      fileType: stored.fileType,
      startRow: stored.startRow,
      fieldMappings: stored.fieldMappings,
      splitFiles: stored.splitFiles,
      splitMode: stored.splitMode,
      maxRowsPerFile: stored.maxRowsPerFile,
      numberOfParts: stored.numberOfParts,
      includeTotal: stored.includeTotal,
      includeHeaders: stored.includeHeaders,
      combinedAssigneeColumnName: stored.combinedAssigneeColumnName,
      combinedFileNameColumnName: stored.combinedFileNameColumnName,
    };
    for (const key of sent) (merged as unknown as Record<string, unknown>)[key] = body[key];
    const updated = await updateFormat(trx, accountId, id, checkFormatFields(merged));
    if (!updated) throw errors.notFound("Export format not found.");
    return updated;
  });
}

/** Deletes a format of the account (the default too: the account then has none); 404 otherwise. */
export async function deleteExportFormat(db: DbOrTrx, accountId: number, id: number): Promise<void> {
  if (!(await deleteFormat(db, accountId, id))) throw errors.notFound("Export format not found.");
}

/**
 * Makes the format the account's only default, atomically (the account row is locked so two
 * concurrent calls cannot leave two defaults); setting the current default again changes nothing.
 */
export async function setDefaultExportFormat(db: Db, accountId: number, id: number): Promise<ExportFormat> {
  return db.transaction().execute(async (trx) => {
    await lockAccount(trx, accountId);
    if (!(await findFormat(trx, accountId, id))) throw errors.notFound("Export format not found.");
    await setOnlyDefault(trx, accountId, id);
    return (await findFormat(trx, accountId, id))!;
  });
}

/**
 * The format an export uses: `formatId` when it is the account's; without `formatId`, the
 * account's default format; null means the built-in default (`defaultFileFormat()`). An unknown
 * `formatId` gives undefined so the caller picks its rule (400, or the default CSV).
 */
export async function resolveExportFormat(
  db: DbOrTrx,
  accountId: number,
  formatId: number | null | undefined,
): Promise<ExportFormat | null | undefined> {
  if (formatId !== null && formatId !== undefined) return findFormat(db, accountId, formatId);
  return (await findDefaultFormat(db, accountId)) ?? null;
}
