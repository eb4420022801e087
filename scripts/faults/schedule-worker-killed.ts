import { sql } from "kysely";
import { startSmtpServer } from "../../test/helpers/smtp.js";
import { checkMoney } from "./counting.js";
import { newAccount, sleep, startService, type FaultService, type ScenarioResult } from "./harness.js";
import {
  createSchedule,
  drainMails,
  mailsTo,
  scheduleHistoryLeads,
  triggerAnswers,
  triggerSchedule,
} from "./schedules.js";

// Scenario 2a (issue 36): the worker killed (SIGKILL) in the middle of e-mail schedule sends, then
// started again. Each account has two schedules on the same broad preset, each split between two
// recipients and holding at most 600 leads a send (the rest waits in the schedule's reservoir);
// every round triggers all of them as jobs and kills the worker while they run. Afterwards: every
// trigger answered, each lead charged once (the ledger equals the lead export history, the second
// schedule's copies of a lead free), every send's mail arrived at each of its recipients at least
// once (duplicates counted), and no mail is left in the queue.

const ACCOUNTS = 3;
const SCHEDULES_PER_ACCOUNT = 2;
const RECIPIENTS = 2;
const MAX_LEADS_PER_EMAIL = 600;
const ROUNDS = 2;

interface Schedule {
  id: number;
  key: string;
  accountId: number;
  recipients: string[];
}

/** Jobs of `ids` by status, as the jobs table has them. */
async function jobStatuses(service: FaultService, ids: string[]): Promise<Map<string, number>> {
  const rows = await sql<{ status: string; n: number }>`
    select status, count(*)::int as n from jobs where id = any(${ids}::text[]) group by status`.execute(
    service.db,
  );
  return new Map(rows.rows.map((r) => [r.status, Number(r.n)]));
}

export async function scheduleWorkerKilled(): Promise<ScenarioResult> {
  const smtp = await startSmtpServer();
  const service = await startService({ leads: 6_000, env: { SMTP_URL: smtp.url } });
  try {
    const schedules: Schedule[] = [];
    const accountIds: number[] = [];
    for (let a = 0; a < ACCOUNTS; a += 1) {
      const account = await newAccount(service.db, `swk${a}`);
      accountIds.push(account.accountId);
      for (let s = 0; s < SCHEDULES_PER_ACCOUNT; s += 1) {
        const recipients = Array.from(
          { length: RECIPIENTS },
          (_, r) => `swk-${a}-${s}-${r}-${Date.now().toString(36)}@example.com`,
        );
        const id = await createSchedule(
          service.base,
          account.apiKey,
          `faults ${a}-${s}`,
          recipients,
          MAX_LEADS_PER_EMAIL,
        );
        schedules.push({ id, key: account.apiKey, accountId: account.accountId, recipients });
      }
    }
    const failures: string[] = [];
    const jobs: { key: string; id: string; schedule: Schedule }[] = [];
    const atKills: string[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const roundJobs: typeof jobs = [];
      for (const schedule of schedules) {
        roundJobs.push({
          key: schedule.key,
          id: await triggerSchedule(service.base, schedule.key, schedule.id),
          schedule,
        });
      }
      jobs.push(...roundJobs);
      const ids = roundJobs.map((j) => j.id);
      // Kill once the sends are under way: a job running (selecting, writing files, committing)
      // and, a moment later, mails queued and being sent.
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline && !(await jobStatuses(service, ids)).get("running")) await sleep(20);
      await sleep(200 + Math.floor(Math.random() * 800));
      const statuses = await jobStatuses(service, ids);
      const mails = smtp.messages.length;
      await service.worker.kill();
      atKills.push(
        `running ${statuses.get("running") ?? 0}/completed ${statuses.get("completed") ?? 0}/mails ${mails}`,
      );
      await sleep(1_000);
      await service.worker.restart();
      // The next round starts from what this one left in the reservoirs.
      const answers = await triggerAnswers(service.base, roundJobs, 240_000);
      if (answers.size < roundJobs.length) {
        failures.push(`round ${round + 1}: ${roundJobs.length - answers.size} triggers unanswered`);
        break;
      }
    }
    const started = Date.now();
    const answers = await triggerAnswers(service.base, jobs, 10_000);
    const left = await drainMails(service.db, 180_000);
    // Time for a copy sent twice to arrive.
    await sleep(3_000);
    const drainSeconds = Math.round((Date.now() - started) / 1000);

    let sends = 0;
    let leadsSent = 0;
    let expectedMails = 0;
    let receivedMails = 0;
    let duplicates = 0;
    let lostMails = 0;
    const sendsOf = new Map<number, number>();
    for (const job of jobs) {
      const answer = answers.get(job.id);
      if (!answer) continue;
      if (answer.status !== 200) failures.push(`trigger ${job.id} answered ${answer.status} ${answer.error}`);
      if (answer.sent) {
        sends += 1;
        leadsSent += answer.leadCount;
        sendsOf.set(job.schedule.id, (sendsOf.get(job.schedule.id) ?? 0) + 1);
      }
    }
    for (const schedule of schedules) {
      // Every send of at least as many leads as recipients mails each recipient its share.
      const expected = sendsOf.get(schedule.id) ?? 0;
      for (const address of schedule.recipients) {
        const got = mailsTo(smtp, address);
        expectedMails += expected;
        receivedMails += Math.min(got, expected);
        duplicates += Math.max(0, got - expected);
        lostMails += Math.max(0, expected - got);
      }
    }
    const money = await checkMoney(service.db, accountIds);
    let historyLeads = 0;
    for (const accountId of accountIds) historyLeads += await scheduleHistoryLeads(service.db, accountId);
    const unanswered = jobs.length - answers.size;
    if (unanswered) failures.push(`${unanswered} triggers unanswered`);
    if (sends === 0) failures.push("nothing was sent");
    if (lostMails) failures.push(`${lostMails} mails lost`);
    if (left.queued) failures.push(`${left.queued} mails still queued (${left.locked} locked)`);
    failures.push(...money.wrong);
    return {
      name: "schedule-worker-killed",
      figures: {
        kills: atKills.length,
        atKills: atKills.join(";").replace(/ /g, ""),
        triggers: jobs.length,
        sends,
        leadsSent,
        leadsCharged: historyLeads,
        sentMails: expectedMails,
        received: receivedMails,
        duplicates,
        lost: lostMails,
        mailsQueuedLeft: left.queued,
        drainSeconds,
        charged: money.chargedTenths / 10,
        expectedCharge: money.expectedTenths / 10,
      },
      failures,
    };
  } finally {
    await service.close();
    await smtp.close();
  }
}
