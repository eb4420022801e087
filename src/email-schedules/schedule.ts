/** How many `intervalUnit`s lie between two runs: 1-720. */
export const INTERVAL_UNITS = ["hours", "days"] as const;
export type IntervalUnit = (typeof INTERVAL_UNITS)[number];

export const DISTRIBUTION_MODES = ["full_copy", "split_evenly"] as const;
export type DistributionMode = (typeof DISTRIBUTION_MODES)[number];

export const PAUSE_REASONS = ["user", "insufficient_credits"] as const;
export type PauseReason = (typeof PAUSE_REASONS)[number];

export const COLUMN_POSITIONS = ["beginning", "end"] as const;
export type ColumnsPosition = (typeof COLUMN_POSITIONS)[number];

/** Most leads one send holds (the bound of `maxLeadsPerEmail`, and its meaning when null). */
export const MAX_LEADS_PER_SEND = 100_000;
/** Most matches the first run of a schedule considers (the newest). */
export const FIRST_RUN_CAP = 10_000;
/** Most leads a schedule's reservoir keeps. */
export const MAX_RESERVOIR_LEADS = 100_000;

/**
 * How long a claim on a regular run holds: a run still going after it (or a worker that died
 * with it) is taken over by the next worker that finds the schedule due.
 */
export const RUN_LEASE_MS = 30 * 60 * 1000;

/** Whether a regular run of the schedule is being sent at `now`. */
export function regularRunInProgress(schedule: Pick<EmailSchedule, "runClaimedAt">, now: Date): boolean {
  return schedule.runClaimedAt !== null && schedule.runClaimedAt.getTime() > now.getTime() - RUN_LEASE_MS;
}

/** One recipient: an address and, in `split_evenly` mode, its weight (null: 1). */
export interface Recipient {
  email: string;
  splitParts: number | null;
}

/** What a schedule is made of (the writable fields, all set). */
export interface ScheduleFields {
  name: string;
  filterPresetId: number;
  exportFormatId: number | null;
  intervalValue: number;
  intervalUnit: IntervalUnit;
  recipients: Recipient[];
  distributionMode: DistributionMode;
  fullCopyRecipients: string[];
  maxLeadsPerEmail: number | null;
  combinedFileEnabled: boolean;
  combinedRecipients: string[];
  combinedColumnsPosition: ColumnsPosition;
}

/** A saved e-mail schedule (domain shape). */
export interface EmailSchedule extends ScheduleFields {
  id: number;
  accountId: number;
  databaseType: string;
  isActive: boolean;
  pauseReason: PauseReason | null;
  lastSentAt: Date | null;
  totalSentCount: number;
  nextRunAt: Date | null;
  /** Highest lead id a run considered; null before the first run. */
  watermarkLeadId: number | null;
  /** When a worker claimed the regular run it is sending (null: none is). */
  runClaimedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const HOUR_MS = 60 * 60 * 1000;

/** The length of a schedule's interval in milliseconds. */
export function intervalMs(schedule: Pick<ScheduleFields, "intervalValue" | "intervalUnit">): number {
  return schedule.intervalValue * (schedule.intervalUnit === "hours" ? HOUR_MS : 24 * HOUR_MS);
}

/** When the next regular run is due, one interval after `from`. */
export function nextRunAfter(
  schedule: Pick<ScheduleFields, "intervalValue" | "intervalUnit">,
  from: Date,
): Date {
  return new Date(from.getTime() + intervalMs(schedule));
}

/** Most leads one send of the schedule holds. */
export function sendCap(schedule: Pick<ScheduleFields, "maxLeadsPerEmail">): number {
  return Math.min(schedule.maxLeadsPerEmail ?? MAX_LEADS_PER_SEND, MAX_LEADS_PER_SEND);
}
