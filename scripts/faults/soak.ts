import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startSmtpServer } from "../../test/helpers/smtp.js";
import { startSmallBusinessSites } from "../../test/helpers/small-business-sites.js";
import { newAccount, sleep, startService, type FaultService } from "./harness.js";
import { checkMoney, countEvents, settleJobs } from "./counting.js";
import { addSites, leadUrls, loopbackDnsEnv, settleRuns } from "./enrichments.js";
import { BROAD_KEYWORDS } from "./postgres-outage.js";
import { createWebhook, startReceiver } from "./receiver.js";
import { createSchedule, drainMails } from "./schedules.js";
import { percentile, startTraffic, statusSummary, type Operation } from "./traffic.js";

// `npm run soak -- --minutes N` (default 2): mixed traffic over many accounts for N minutes against
// the service as production runs it (harness.ts): profile reads, paid searches (each page new
// leads, announced to the account's webhook), exports as jobs, job polls, export history lists,
// e-mail schedule sends (`POST /email-schedules/{id}/trigger`, mailed to the local SMTP server)
// and enrichment runs (lead websites matched in the database, local websites read live). Prints
// p50 / p95 per operation, the 5xx count, the API's, the worker's and PostgreSQL's memory every
// minute, and at the end the money check (charges equal leads received plus live enrichment
// results, every account), the events check (every delivery created received), every job and
// run finished and no mail left queued. Exits 1 on any 5xx, any event lost, any job, run or mail
// unfinished or any account whose money disagrees. Bounded: 8 clients pausing 100 ms between
// requests.

const ACCOUNTS = 8;
const CLIENTS = 8;

function minutesArg(): number {
  const at = process.argv.indexOf("--minutes");
  const value = at >= 0 ? Number(process.argv[at + 1]) : 2;
  if (!Number.isFinite(value) || value <= 0 || value > 24 * 60) throw new Error("--minutes takes 1 to 1440");
  return value;
}

/** Resident memory in MB of one process (0 when it is gone). */
function rssMb(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
  } catch {
    return 0;
  }
}

/** Proportional memory (PSS) in MB of one process: shared pages divided among the processes sharing them. */
function pssMb(pid: number): number {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    return Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/**
 * PostgreSQL's postmaster and its backends together, as PSS (their RSS summed would count the
 * shared buffers once per backend that touched them, and grow with every connection's reads).
 */
function postgresMb(service: FaultService): number {
  try {
    const pid = Number(
      readFileSync(join(service.postgres.databaseDir, "postmaster.pid"), "utf8").split("\n")[0],
    );
    const children = execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" })
      .split("\n")
      .map((l) => Number(l.trim()))
      .filter((n) => n > 0);
    return Math.round([pid, ...children].reduce((sum, p) => sum + pssMb(p), 0));
  } catch {
    return 0;
  }
}

async function main(): Promise<void> {
  const minutes = minutesArg();
  const smtp = await startSmtpServer();
  const sites = await startSmallBusinessSites();
  const service = await startService({ leads: 10_000, env: { SMTP_URL: smtp.url, ...loopbackDnsEnv() } });
  const receiver = await startReceiver();
  let failed = false;
  try {
    const accounts: { accountId: number; apiKey: string; scheduleId: number }[] = [];
    for (let i = 0; i < ACCOUNTS; i += 1) {
      const account = await newAccount(service.db, `soak${i}`);
      await createWebhook(service.base, account.apiKey, receiver, `/soak${i}`);
      const scheduleId = await createSchedule(
        service.base,
        account.apiKey,
        `soak ${i}`,
        [`soak-${i}-a@example.com`, `soak-${i}-b@example.com`],
        200,
      );
      accounts.push({ ...account, scheduleId });
    }
    const accountOf = (c: number) => accounts[c % ACCOUNTS]!;
    // Enrichments take 40 lead websites each, moving through these (later runs meet leads the
    // account already has: free), and 5 new local websites answering in 200 ms.
    const databaseUrls = await leadUrls(service.db, 2_000);
    let enrichments = 0;
    const runs: { key: string; id: number }[] = [];
    const pages = new Map<number, number>();
    const jobs: { key: string; id: string }[] = [];
    const lastJob = new Map<string, string>();
    const operations: Record<string, Operation> = {
      me: { name: "me", request: (c) => ({ key: accountOf(c).apiKey, method: "GET", path: "/me" }) },
      search: {
        name: "search",
        request: (c) => {
          const page = (pages.get(c % ACCOUNTS) ?? 0) + 1;
          pages.set(c % ACCOUNTS, page);
          return {
            key: accountOf(c).apiKey,
            method: "GET",
            path: `/leads?positiveKeywords=${BROAD_KEYWORDS}&limit=10&page=${page}`,
          };
        },
      },
      export: {
        name: "export",
        request: (c) => ({
          key: accountOf(c).apiKey,
          method: "POST",
          path: "/leads/export",
          body: { filters: { positiveKeywords: BROAD_KEYWORDS.split(",") }, maxCredits: 10 },
          headers: { prefer: "respond-async" },
        }),
        answered: (status, _body, headers, key) => {
          const id = headers.get("x-svc-job-id");
          if (id && (status === 202 || status === 200)) {
            jobs.push({ key, id });
            lastJob.set(key, id);
          }
        },
      },
      poll: {
        name: "poll",
        request: (c) => {
          const key = accountOf(c).apiKey;
          const id = lastJob.get(key);
          return id ? { key, method: "GET", path: `/jobs/${id}` } : { key, method: "GET", path: "/me" };
        },
      },
      history: {
        name: "history",
        request: (c) => ({ key: accountOf(c).apiKey, method: "GET", path: "/export-history?limit=10" }),
      },
      trigger: {
        name: "trigger",
        request: (c) => ({
          key: accountOf(c).apiKey,
          method: "POST",
          path: `/email-schedules/${accountOf(c).scheduleId}/trigger`,
          headers: { prefer: "respond-async" },
        }),
        answered: (status, _body, headers, key) => {
          const id = headers.get("x-svc-job-id");
          if (id && (status === 202 || status === 200)) jobs.push({ key, id });
        },
      },
      enrich: {
        name: "enrich",
        request: (c) => {
          const n = enrichments++;
          const from = (n * 40) % databaseUrls.length;
          return {
            key: accountOf(c).apiKey,
            method: "POST",
            path: "/enrichments",
            body: {
              urls: [...databaseUrls.slice(from, from + 40), ...addSites(sites, `soak${n}-`, 5, 200)],
              contactTypes: "either",
            },
          };
        },
        answered: (status, body, _headers, key) => {
          const id = (body.data as { id?: number } | undefined)?.id;
          if (status === 202 && id !== undefined) runs.push({ key, id });
        },
      },
    };
    // Exports every 40th request (their limit is 5 a minute per key, shared with schedule
    // triggers), a schedule trigger and an enrichment every 80th, polls and history lists now and
    // then, searches and profile reads the rest.
    const choose = (_c: number, n: number): Operation =>
      n % 40 === 7
        ? operations.export!
        : n % 80 === 27
          ? operations.trigger!
          : n % 80 === 67
            ? operations.enrich!
            : n % 10 === 3
              ? operations.poll!
              : n % 10 === 6
                ? operations.history!
                : n % 2
                  ? operations.search!
                  : operations.me!;
    const traffic = startTraffic(service.base, choose, CLIENTS, { pauseMs: 100 });
    const started = Date.now();
    const memory = () =>
      `api ${rssMb(service.api.child.pid)} MB, worker ${rssMb(service.worker.child.pid)} MB, postgres ${postgresMb(service)} MB (PSS)`;
    console.log(`minute 0: ${memory()}`);
    for (let minute = 1; minute <= Math.ceil(minutes); minute += 1) {
      await sleep(Math.max(0, started + Math.min(minute, minutes) * 60_000 - Date.now()));
      console.log(
        `minute ${minute}: ${memory()}, ${traffic.counts.requests} requests, 5xx ${[...traffic.counts.serverErrors.values()].reduce((a, b) => a + b, 0)}`,
      );
    }
    const counts = await traffic.stop();
    for (const [name, values] of [...counts.latencies].sort(([a], [b]) => a.localeCompare(b))) {
      console.log(
        `${name}: ${values.length} requests, p50 ${percentile(values, 50)} ms, p95 ${percentile(values, 95)} ms, 5xx ${counts.serverErrors.get(name) ?? 0}`,
      );
    }
    const settled = await settleJobs(service.base, jobs, 120_000);
    const records = await settleRuns(service.base, runs, 240_000);
    const runsUnfinished = [...records.values()].filter(
      (r) => !r || r.status === "failed" || !r.credits.final,
    ).length;
    const mailsLeft = await drainMails(service.db, 120_000);
    const events = await countEvents(service.db, receiver, 120_000);
    const money = await checkMoney(
      service.db,
      accounts.map((a) => a.accountId),
    );
    const serverErrors = [...counts.serverErrors.values()].reduce((a, b) => a + b, 0);
    console.log(
      `statuses ${statusSummary(counts.byStatus)}; hung ${counts.hung}; jobs ${jobs.length} (completed ${settled.completed}, failed ${settled.failed}, unfinished ${settled.unfinished}); ` +
        `enrichments ${runs.length} (${runs.length - runsUnfinished} finished with final credits); mails received ${smtp.messages.length}, left queued ${mailsLeft.queued}; ` +
        `events sent ${events.sent}, received ${events.received}, duplicates ${events.duplicates}, lost ${events.lost}, bad signatures ${events.badSignatures}; ` +
        `money: charged ${money.chargedTenths / 10}, expected ${money.expectedTenths / 10}`,
    );
    const problems = [
      ...(serverErrors ? [`${serverErrors} 5xx answers`] : []),
      ...(counts.hung ? [`${counts.hung} hung requests`] : []),
      ...(settled.unfinished ? [`${settled.unfinished} jobs unfinished`] : []),
      ...(settled.failed
        ? [`${settled.failed} jobs failed: ${settled.failures.slice(0, 3).join(", ")}`]
        : []),
      ...(runsUnfinished ? [`${runsUnfinished} enrichment runs failed or unfinished`] : []),
      ...(mailsLeft.queued ? [`${mailsLeft.queued} mails still queued`] : []),
      ...(events.lost ? [`${events.lost} events lost`] : []),
      ...(events.badSignatures ? [`${events.badSignatures} bad signatures`] : []),
      ...money.wrong,
    ];
    failed = problems.length > 0;
    console.log(failed ? `FAIL soak: ${problems.join("; ")}` : "PASS soak");
  } finally {
    await receiver.close();
    await service.close();
    await sites.close();
    await smtp.close();
  }
  process.exit(failed ? 1 : 0);
}

void main();
