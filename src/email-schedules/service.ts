import { findAccount } from "../accounts/repository.js";
import type { Db, DbOrTrx } from "../db/database.js";
import { resolveExportFormat } from "../export-formats/service.js";
import type { BodyOf } from "../http/contract.js";
import { errors } from "../http/errors.js";
import {
  deleteSchedule,
  findPresetFilters,
  findSchedule,
  insertSchedule,
  listSchedules,
  updateSchedule,
} from "./repository.js";
import { checkScheduleFields } from "./rules.js";
import {
  intervalMs,
  nextRunAfter,
  type EmailSchedule,
  type PauseReason,
  type ScheduleFields,
} from "./schedule.js";

type CreateBody = BodyOf<"createEmailSchedule">;
type RequiredField = "name" | "filterPresetId" | "intervalValue";

/** A create body (checked against the contract, which fills the defaults; callers may omit them). */
export type NewScheduleInput = Pick<CreateBody, RequiredField> & Partial<Omit<CreateBody, RequiredField>>;

/** The fields a PATCH may change. */
export const WRITABLE_FIELDS = [
  "name",
  "filterPresetId",
  "exportFormatId",
  "intervalValue",
  "intervalUnit",
  "isActive",
  "recipients",
  "distributionMode",
  "fullCopyRecipients",
  "maxLeadsPerEmail",
  "combinedFileEnabled",
  "combinedRecipients",
  "combinedColumnsPosition",
] as const;

/** The account's schedules, oldest first. */
export function listEmailSchedules(db: DbOrTrx, accountId: number): Promise<EmailSchedule[]> {
  return listSchedules(db, accountId);
}

/** 400 `validation_error` unless the preset and the format (when given) are the account's. */
async function checkReferences(
  db: DbOrTrx,
  accountId: number,
  refs: { filterPresetId?: number; exportFormatId?: number | null },
): Promise<void> {
  if (refs.filterPresetId !== undefined) {
    if (!(await findPresetFilters(db, accountId, refs.filterPresetId))) {
      throw errors.validation("filterPresetId: no filter preset with this id.", [
        { path: ["body", "filterPresetId"], message: "no filter preset with this id" },
      ]);
    }
  }
  if (refs.exportFormatId !== undefined && refs.exportFormatId !== null) {
    if (!(await resolveExportFormat(db, accountId, refs.exportFormatId))) {
      throw errors.validation("exportFormatId: no export format with this id.", [
        { path: ["body", "exportFormatId"], message: "no export format with this id" },
      ]);
    }
  }
}

/**
 * Creates a schedule: the defaults of the contract, the account's own address as the only
 * recipient when none is given, the account's database, the first regular run one interval later.
 */
export async function createEmailSchedule(
  db: Db,
  accountId: number,
  input: NewScheduleInput,
  now = new Date(),
): Promise<EmailSchedule> {
  const account = await findAccount(db, accountId);
  if (!account) throw errors.notFound("Account not found.");
  await checkReferences(db, accountId, input);
  const fields = checkScheduleFields({
    name: input.name,
    filterPresetId: input.filterPresetId,
    exportFormatId: input.exportFormatId ?? null,
    intervalValue: input.intervalValue,
    intervalUnit: input.intervalUnit ?? "days",
    recipients: (input.recipients ?? [{ email: account.email }]).map((r) => ({
      email: r.email,
      splitParts: r.splitParts ?? null,
    })),
    distributionMode: input.distributionMode ?? "full_copy",
    fullCopyRecipients: input.fullCopyRecipients ?? [],
    maxLeadsPerEmail: input.maxLeadsPerEmail ?? null,
    combinedFileEnabled: input.combinedFileEnabled ?? false,
    combinedRecipients: input.combinedRecipients ?? [],
    combinedColumnsPosition: input.combinedColumnsPosition ?? "end",
  });
  const isActive = input.isActive ?? true;
  return insertSchedule(db, accountId, fields, {
    isActive,
    databaseType: account.smbType,
    nextRunAt: isActive ? nextRunAfter(fields, now) : null,
    now,
  });
}

/**
 * The state after a PATCH: `isActive` false pauses (`user`); true resumes a paused schedule
 * (one interval from now). A new interval of an active schedule counts from its last due time
 * (not earlier than now).
 */
function nextState(
  stored: EmailSchedule,
  fields: ScheduleFields,
  isActive: boolean | undefined,
  now: Date,
): { isActive: boolean; pauseReason: PauseReason | null; nextRunAt: Date | null } {
  if (isActive === false) return { isActive: false, pauseReason: "user", nextRunAt: null };
  if (!stored.isActive) {
    if (isActive === true) return { isActive: true, pauseReason: null, nextRunAt: nextRunAfter(fields, now) };
    return { isActive: false, pauseReason: stored.pauseReason, nextRunAt: null };
  }
  let nextRunAt = stored.nextRunAt ?? nextRunAfter(fields, now);
  if (intervalMs(fields) !== intervalMs(stored)) {
    const base = nextRunAt.getTime() - intervalMs(stored);
    nextRunAt = new Date(Math.max(now.getTime(), base + intervalMs(fields)));
  }
  return { isActive: true, pauseReason: null, nextRunAt };
}

/**
 * Applies the writable fields sent (others ignored) and checks the rules on the result: 400
 * `bad_request` when none is sent, 400 `validation_error` for a preset or format that is not the
 * account's or a broken rule, 404 for another account's schedule.
 */
export async function updateEmailSchedule(
  db: Db,
  accountId: number,
  id: number,
  body: Record<string, unknown>,
  now = new Date(),
): Promise<EmailSchedule> {
  const sent = WRITABLE_FIELDS.filter((key) => body[key] !== undefined);
  if (sent.length === 0) throw errors.badRequest(`Send at least one of: ${WRITABLE_FIELDS.join(", ")}.`);
  const changes = body as Partial<ScheduleFields> & { isActive?: boolean };
  return db.transaction().execute(async (trx) => {
    const stored = await findSchedule(trx, accountId, id, { forUpdate: true });
    if (!stored) throw errors.notFound("E-mail schedule not found.");
    await checkReferences(trx, accountId, {
      filterPresetId: changes.filterPresetId,
      exportFormatId: changes.exportFormatId,
    });
    const merged: ScheduleFields = {
      name: changes.name ?? stored.name,
      filterPresetId: changes.filterPresetId ?? stored.filterPresetId,
      exportFormatId: changes.exportFormatId !== undefined ? changes.exportFormatId : stored.exportFormatId,
      intervalValue: changes.intervalValue ?? stored.intervalValue,
      intervalUnit: changes.intervalUnit ?? stored.intervalUnit,
      recipients: changes.recipients ?? stored.recipients,
      distributionMode: changes.distributionMode ?? stored.distributionMode,
      fullCopyRecipients: changes.fullCopyRecipients ?? stored.fullCopyRecipients,
      maxLeadsPerEmail:
        changes.maxLeadsPerEmail !== undefined ? changes.maxLeadsPerEmail : stored.maxLeadsPerEmail,
      combinedFileEnabled: changes.combinedFileEnabled ?? stored.combinedFileEnabled,
      combinedRecipients: changes.combinedRecipients ?? stored.combinedRecipients,
      combinedColumnsPosition: changes.combinedColumnsPosition ?? stored.combinedColumnsPosition,
    };
    const fields = checkScheduleFields(merged);
    const state = nextState(stored, fields, changes.isActive, now);
    const updated = await updateSchedule(trx, accountId, id, fields, { ...state, now });
    if (!updated) throw errors.notFound("E-mail schedule not found.");
    return updated;
  });
}

/** Deletes a schedule of the account; 404 otherwise. Files it sent stay in the export history. */
export async function deleteEmailSchedule(db: DbOrTrx, accountId: number, id: number): Promise<void> {
  if (!(await deleteSchedule(db, accountId, id))) throw errors.notFound("E-mail schedule not found.");
}
