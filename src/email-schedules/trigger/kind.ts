import { defineJobKind, JOB_LIFETIMES, type JobAnswerOf } from "../../jobs/index.js";
import { ATTACHMENT_LIMIT_BYTES } from "../run/mail.js";
import { sendSchedule, type SendOutcome } from "../run/send.js";

/** Running triggers per account (openapi.yaml, triggerEmailSchedule). */
export const TRIGGER_JOB_CAPACITY = 5;

/** What the trigger job receives (stored with the job, so JSON only). */
export interface TriggerJobInput {
  scheduleId: number;
  /** Base of the download links of files too large to attach. */
  publicBaseUrl: string;
}

function parseTriggerInput(raw: unknown): TriggerJobInput {
  const input = raw as Partial<TriggerJobInput> | null;
  if (!input || typeof input.scheduleId !== "number" || typeof input.publicBaseUrl !== "string") {
    throw new Error("not a schedule trigger input");
  }
  return { scheduleId: input.scheduleId, publicBaseUrl: input.publicBaseUrl };
}

type TriggerAnswer = JobAnswerOf<"triggerEmailSchedule">;

function answerOf(outcome: SendOutcome): TriggerAnswer {
  return {
    status: 200,
    body: {
      data: {
        sent: outcome.sent,
        leadCount: outcome.leadCount,
        creditsUsed: outcome.creditsUsedTenths / 10,
        recipients: outcome.recipients,
        message: outcome.message,
      },
    },
  };
}

/**
 * The `email_schedule_trigger` job of `POST /email-schedules/{id}/trigger`: one send of the
 * schedule (sendSchedule), whose answer commits in the send's transaction, so a retried job
 * never sends twice. Imported by src/worker/worker.ts too, so workers find it by name.
 */
export const scheduleTriggerJob = defineJobKind<TriggerJobInput, "triggerEmailSchedule">({
  kind: "email_schedule_trigger",
  operation: "triggerEmailSchedule",
  capacity: TRIGGER_JOB_CAPACITY,
  timeoutMs: 30 * 60_000,
  ...JOB_LIFETIMES.scheduleTrigger,
  parseInput: parseTriggerInput,
  async run(input, job) {
    await job.progress({ phase: "sending", done: 0, total: 1, label: "sends" });
    let answer: TriggerAnswer | undefined;
    await sendSchedule(
      {
        db: job.db,
        storage: job.storage,
        signer: { signingSecret: job.signingSecret, publicBaseUrl: input.publicBaseUrl },
        attachmentLimitBytes: ATTACHMENT_LIMIT_BYTES,
      },
      job.accountId,
      input.scheduleId,
      {
        kind: "trigger",
        jobId: job.jobId,
        commit: async (trx, outcome) => {
          answer = answerOf(outcome);
          await job.commit(trx, answer);
        },
      },
    );
    return answer!;
  },
});
