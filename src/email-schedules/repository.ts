import { sql, type Selectable } from "kysely";
import type { DbOrTrx } from "../db/database.js";
import type { EmailSchedulesTable } from "../db/schema/email-schedules.js";
import type {
  ColumnsPosition,
  DistributionMode,
  EmailSchedule,
  IntervalUnit,
  PauseReason,
  ScheduleFields,
} from "./schedule.js";

type Row = Selectable<EmailSchedulesTable>;

function toSchedule(row: Row): EmailSchedule {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    databaseType: row.database_type,
    // A schedule made before it had a preset (never through the API) has none: id 0 finds none.
    filterPresetId: row.filter_preset_id ?? 0,
    exportFormatId: row.export_format_id,
    intervalValue: row.interval_value,
    intervalUnit: row.interval_unit as IntervalUnit,
    isActive: row.is_active,
    pauseReason: row.pause_reason as PauseReason | null,
    recipients: row.recipients.map((r) => ({ email: r.email, splitParts: r.splitParts ?? null })),
    distributionMode: row.distribution_mode as DistributionMode,
    fullCopyRecipients: row.full_copy_recipients,
    maxLeadsPerEmail: row.max_leads_per_email,
    combinedFileEnabled: row.combined_file_enabled,
    combinedRecipients: row.combined_recipients,
    combinedColumnsPosition: row.combined_columns_position as ColumnsPosition,
    lastSentAt: row.last_sent_at,
    totalSentCount: row.total_sent_count,
    nextRunAt: row.next_run_at,
    watermarkLeadId: row.watermark_lead_id,
    runClaimedAt: row.run_claimed_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The columns of a schedule's fields. */
function fieldColumns(fields: ScheduleFields) {
  return {
    name: fields.name,
    filter_preset_id: fields.filterPresetId,
    export_format_id: fields.exportFormatId,
    interval_value: fields.intervalValue,
    interval_unit: fields.intervalUnit,
    recipients: JSON.stringify(fields.recipients),
    distribution_mode: fields.distributionMode,
    full_copy_recipients: fields.fullCopyRecipients,
    max_leads_per_email: fields.maxLeadsPerEmail,
    combined_file_enabled: fields.combinedFileEnabled,
    combined_recipients: fields.combinedRecipients,
    combined_columns_position: fields.combinedColumnsPosition,
  };
}

/** The account's schedules, oldest first. */
export async function listSchedules(db: DbOrTrx, accountId: number): Promise<EmailSchedule[]> {
  const rows = await db
    .selectFrom("email_schedules")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("id")
    .execute();
  return rows.map(toSchedule);
}

/** One schedule of the account (locked for update with `forUpdate`), or undefined. */
export async function findSchedule(
  db: DbOrTrx,
  accountId: number,
  id: number,
  { forUpdate = false } = {},
): Promise<EmailSchedule | undefined> {
  let query = db
    .selectFrom("email_schedules")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "=", id);
  if (forUpdate) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row ? toSchedule(row) : undefined;
}

/** A schedule by id alone (the runner's view), or undefined. */
export async function findScheduleById(db: DbOrTrx, id: number): Promise<EmailSchedule | undefined> {
  const row = await db.selectFrom("email_schedules").selectAll().where("id", "=", id).executeTakeFirst();
  return row ? toSchedule(row) : undefined;
}

/** Stores a new schedule. */
export async function insertSchedule(
  db: DbOrTrx,
  accountId: number,
  fields: ScheduleFields,
  state: { isActive: boolean; databaseType: string; nextRunAt: Date | null; now: Date },
): Promise<EmailSchedule> {
  const row = await db
    .insertInto("email_schedules")
    .values({
      account_id: accountId,
      ...fieldColumns(fields),
      database_type: state.databaseType,
      is_active: state.isActive,
      pause_reason: state.isActive ? null : "user",
      next_run_at: state.nextRunAt,
      created_at: state.now,
      updated_at: state.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toSchedule(row);
}

/** Writes a schedule's fields and state; undefined when the account has no such schedule. */
export async function updateSchedule(
  db: DbOrTrx,
  accountId: number,
  id: number,
  fields: ScheduleFields,
  state: { isActive: boolean; pauseReason: PauseReason | null; nextRunAt: Date | null; now: Date },
): Promise<EmailSchedule | undefined> {
  const row = await db
    .updateTable("email_schedules")
    .set({
      ...fieldColumns(fields),
      is_active: state.isActive,
      pause_reason: state.pauseReason,
      next_run_at: state.nextRunAt,
      updated_at: state.now,
    })
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
  return row ? toSchedule(row) : undefined;
}

/** Deletes a schedule of the account (its reservoir goes with it); false when there is none. */
export async function deleteSchedule(db: DbOrTrx, accountId: number, id: number): Promise<boolean> {
  const result = await db
    .deleteFrom("email_schedules")
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The filters of one of the account's filter presets, or undefined when it has no such preset. */
export async function findPresetFilters(
  db: DbOrTrx,
  accountId: number,
  presetId: number,
): Promise<Record<string, unknown> | undefined> {
  const row = await db
    .selectFrom("filter_presets")
    .select("filters")
    .where("account_id", "=", accountId)
    .where("id", "=", presetId)
    .executeTakeFirst();
  return row?.filters;
}

/** Ends a regular run's claim without a send (the run found nothing it could do). */
export async function releaseClaim(db: DbOrTrx, id: number, claim: Date): Promise<void> {
  await db
    .updateTable("email_schedules")
    .set({ run_claimed_at: null })
    .where("id", "=", id)
    .where("run_claimed_at", "=", claim)
    .execute();
}

/** Subscription statuses whose schedules run (as API access: an active or trialing paid plan). */
const PAID_STATUSES = ["active", "trialing"];

/**
 * Due schedules (active, `next_run_at` passed) of accounts with a paid subscription, oldest due
 * first. A schedule of an account without one waits, due, until the subscription is back.
 */
export async function findDueSchedules(
  db: DbOrTrx,
  now: Date,
  limit: number,
): Promise<{ id: number; accountId: number }[]> {
  const rows = await db
    .selectFrom("email_schedules as s")
    .innerJoin("accounts as a", "a.id", "s.account_id")
    .select(["s.id as id", "s.account_id as account_id"])
    .where("s.is_active", "=", true)
    .where("s.next_run_at", "<=", now)
    .where("a.plan", "is not", null)
    .where("a.subscription_status", "in", PAID_STATUSES)
    .orderBy("s.next_run_at")
    .orderBy("s.id")
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: r.id, accountId: r.account_id }));
}

/**
 * Claims the schedule's due regular run for this worker: only while it is active, due and not
 * claimed by a live run (a claim older than `leaseMs` is taken over). Answers the claim (the
 * token the run's commit checks) or undefined when another worker has it or it is not due.
 */
export async function claimDueRun(
  db: DbOrTrx,
  id: number,
  now: Date,
  leaseMs: number,
): Promise<Date | undefined> {
  const row = await db
    .updateTable("email_schedules")
    .set({ run_claimed_at: now })
    .where("id", "=", id)
    .where("is_active", "=", true)
    .where("next_run_at", "<=", now)
    .where((eb) =>
      eb.or([eb("run_claimed_at", "is", null), eb("run_claimed_at", "<", new Date(now.getTime() - leaseMs))]),
    )
    .returning("run_claimed_at")
    .executeTakeFirst();
  return row?.run_claimed_at ?? undefined;
}

/** The state a send leaves: counters, watermark and (for a regular run) the next run and pause. */
export interface SendState {
  sentAt: Date | null;
  sentCount: number;
  watermarkLeadId: number | null;
  /** Regular runs only: the next due time (null when paused now). */
  nextRunAt?: Date | null;
  /** Regular runs only: pause with this reason. */
  pauseReason?: PauseReason;
  /** Regular runs only: the run's claim ends. */
  releaseClaim?: boolean;
}

/** What a send expects of its schedule when it records itself (else another send came first). */
export interface SendExpectation {
  /** The watermark the send selected from. */
  watermarkLeadId: number | null;
  /** A regular run: its claim, still held, on an active schedule. */
  claim?: Date;
  /** A trigger: an active schedule that no live regular run claims (claims older than this are dead). */
  claimsLiveAfter?: Date;
}

/**
 * Records what a send did to its schedule, only while the schedule is as the send expects (one
 * conditional UPDATE, which also takes the row's lock): false when it is not, and nothing changed.
 */
export async function recordSend(
  db: DbOrTrx,
  id: number,
  expected: SendExpectation,
  state: SendState,
): Promise<boolean> {
  const watermark = expected.watermarkLeadId;
  const result = await db
    .updateTable("email_schedules")
    .set((eb) => ({
      last_sent_at: state.sentAt === null ? eb.ref("last_sent_at") : state.sentAt,
      total_sent_count: sql<number>`total_sent_count + ${state.sentCount}`,
      watermark_lead_id: state.watermarkLeadId,
      ...(state.nextRunAt !== undefined ? { next_run_at: state.nextRunAt } : {}),
      ...(state.pauseReason ? { is_active: false, pause_reason: state.pauseReason } : {}),
      ...(state.releaseClaim ? { run_claimed_at: null } : {}),
    }))
    .where("id", "=", id)
    .where(sql<boolean>`watermark_lead_id is not distinct from ${watermark}`)
    .$if(expected.claim !== undefined, (q) =>
      q.where("is_active", "=", true).where("run_claimed_at", "=", expected.claim!),
    )
    .$if(expected.claimsLiveAfter !== undefined, (q) =>
      q
        .where("is_active", "=", true)
        .where((eb) =>
          eb.or([eb("run_claimed_at", "is", null), eb("run_claimed_at", "<=", expected.claimsLiveAfter!)]),
        ),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Replaces the schedule's reservoir with these leads, in this order. */
export async function replaceReservoir(db: DbOrTrx, scheduleId: number, leadIds: readonly number[]) {
  await db.deleteFrom("email_schedule_reservoir").where("schedule_id", "=", scheduleId).execute();
  if (leadIds.length === 0) return;
  await sql`
    insert into email_schedule_reservoir (schedule_id, lead_id, position)
    select ${scheduleId}, u.lead_id, u.position
    from unnest(cast(${[...leadIds]} as integer[])) with ordinality as u(lead_id, position)`.execute(db);
}
