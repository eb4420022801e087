import { sql } from "kysely";
import type { Db } from "../../src/db/database.js";
import type { TestSmtpServer } from "../../test/helpers/smtp.js";
import { api, sleep } from "./harness.js";
import { BROAD_KEYWORDS } from "./postgres-outage.js";

// E-mail schedules for the fault scenarios and the soak (docs/email-schedules.md): a schedule on a
// filter preset of broad keywords, sent now with `POST /email-schedules/{id}/trigger` as a job,
// and the mails counted at the local SMTP server.

/** A schedule of the account, split among `recipients`, at most `maxLeadsPerEmail` leads a send. */
export async function createSchedule(
  base: string,
  key: string,
  name: string,
  recipients: string[],
  maxLeadsPerEmail: number,
): Promise<number> {
  const preset = await api(base, key, "POST", "/filter-presets", {
    name: `${name} preset`,
    filters: { positiveKeywords: BROAD_KEYWORDS.split(",") },
  });
  const presetId = (preset.body.data as { id?: number } | undefined)?.id;
  if (preset.status !== 201 || presetId === undefined)
    throw new Error(`creating a preset answered ${preset.status}: ${JSON.stringify(preset.body)}`);
  const res = await api(base, key, "POST", "/email-schedules", {
    name,
    filterPresetId: presetId,
    intervalValue: 1,
    intervalUnit: "days",
    recipients: recipients.map((email) => ({ email })),
    distributionMode: recipients.length > 1 ? "split_evenly" : "full_copy",
    maxLeadsPerEmail,
  });
  const id = (res.body.data as { id?: number } | undefined)?.id;
  if (res.status !== 201 || id === undefined)
    throw new Error(`creating a schedule answered ${res.status}: ${JSON.stringify(res.body)}`);
  return id;
}

/** Sends the schedule now as a job (`Prefer: respond-async`); the job's id. */
export async function triggerSchedule(base: string, key: string, id: number): Promise<string> {
  const res = await api(base, key, "POST", `/email-schedules/${id}/trigger`, undefined, 15_000, {
    prefer: "respond-async",
    "idempotency-key": `faults-trigger-${id}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`,
  });
  const jobId = res.headers.get("x-svc-job-id");
  if ((res.status !== 202 && res.status !== 200) || !jobId)
    throw new Error(`a trigger answered ${res.status}: ${JSON.stringify(res.body)}`);
  return jobId;
}

/** What a finished trigger job answered (`data` of its 200), or why it did not. */
export interface TriggerAnswer {
  status: number;
  sent: boolean;
  leadCount: number;
  recipients: number;
  error?: string;
}

/** Polls the trigger jobs until each has an answer (up to `timeoutMs`); unfinished ones are missing. */
export async function triggerAnswers(
  base: string,
  jobs: { key: string; id: string }[],
  timeoutMs: number,
): Promise<Map<string, TriggerAnswer>> {
  const answers = new Map<string, TriggerAnswer>();
  const deadline = Date.now() + timeoutMs;
  while (answers.size < jobs.length && Date.now() < deadline) {
    for (const job of jobs) {
      if (answers.has(job.id)) continue;
      const res = await api(base, job.key, "GET", `/jobs/${job.id}`).catch(() => undefined);
      if (!res || res.status === 202 || res.headers.get("x-svc-job-status") === "running") continue;
      const data = res.body.data as { sent?: boolean; leadCount?: number; recipients?: number } | undefined;
      answers.set(job.id, {
        status: res.status,
        sent: data?.sent === true,
        leadCount: data?.leadCount ?? 0,
        recipients: data?.recipients ?? 0,
        ...(res.status !== 200 ? { error: String(res.body.error ?? res.status) } : {}),
      });
    }
    if (answers.size < jobs.length) await sleep(500);
  }
  return answers;
}

/** `mail__send` jobs still in graphile-worker's queue (waiting, retrying or locked). */
export async function queuedMails(db: Db): Promise<{ queued: number; locked: number }> {
  const res = await sql<{ queued: number; locked: number }>`
    select count(*)::int as queued, count(*) filter (where locked_at is not null)::int as locked
    from graphile_worker.jobs where task_identifier = 'mail__send'`.execute(db);
  return { queued: Number(res.rows[0]!.queued), locked: Number(res.rows[0]!.locked) };
}

/** Waits (up to `timeoutMs`) until no mail is queued; what is still queued then. */
export async function drainMails(db: Db, timeoutMs: number): Promise<{ queued: number; locked: number }> {
  const deadline = Date.now() + timeoutMs;
  let left = await queuedMails(db);
  while (left.queued > 0 && Date.now() < deadline) {
    await sleep(500);
    left = await queuedMails(db);
  }
  return left;
}

/** Mails the SMTP server received for `address`. */
export const mailsTo = (smtp: TestSmtpServer, address: string) =>
  smtp.messages.filter((m) => m.to.some((to) => to.toLowerCase() === address.toLowerCase())).length;

/** Leads an account received through e-mail schedules (its lead export history). */
export async function scheduleHistoryLeads(db: Db, accountId: number): Promise<number> {
  const res = await sql<{ n: number }>`
    select count(*)::int as n from lead_export_history
    where account_id = ${accountId} and export_method = 'email_schedule'`.execute(db);
  return Number(res.rows[0]!.n);
}
