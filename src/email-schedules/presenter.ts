import type { JsonBody } from "../http/contract.js";
import type { EmailSchedule } from "./schedule.js";

export type EmailScheduleBody = JsonBody<"createEmailSchedule", 201>["data"];

/** The API's shape of a schedule (`lastSent` repeats `lastSentAt` under its older name). */
export function toEmailScheduleBody(schedule: EmailSchedule): EmailScheduleBody {
  const lastSentAt = schedule.lastSentAt?.toISOString() ?? null;
  return {
    id: schedule.id,
    name: schedule.name,
    filterPresetId: schedule.filterPresetId,
    exportFormatId: schedule.exportFormatId,
    intervalValue: schedule.intervalValue,
    intervalUnit: schedule.intervalUnit,
    isActive: schedule.isActive,
    pauseReason: schedule.pauseReason,
    recipients: schedule.recipients.map((r) =>
      r.splitParts === null ? { email: r.email } : { email: r.email, splitParts: r.splitParts },
    ),
    distributionMode: schedule.distributionMode,
    fullCopyRecipients: schedule.fullCopyRecipients,
    maxLeadsPerEmail: schedule.maxLeadsPerEmail,
    combinedFileEnabled: schedule.combinedFileEnabled,
    combinedRecipients: schedule.combinedRecipients,
    combinedColumnsPosition: schedule.combinedColumnsPosition,
    lastSent: lastSentAt,
    lastSentAt,
    totalSentCount: schedule.totalSentCount,
    nextRunAt: schedule.isActive ? (schedule.nextRunAt?.toISOString() ?? null) : null,
    createdAt: schedule.createdAt.toISOString(),
    updatedAt: schedule.updatedAt.toISOString(),
  };
}
