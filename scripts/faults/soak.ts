import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { newAccount, sleep, startService, type FaultService } from "./harness.js";
import { checkMoney, countEvents, settleJobs } from "./counting.js";
import { BROAD_KEYWORDS } from "./postgres-outage.js";
import { createWebhook, startReceiver } from "./receiver.js";
import { percentile, startTraffic, statusSummary, type Operation } from "./traffic.js";

// `npm run soak -- --minutes N` (default 2): mixed traffic over many accounts for N minutes against
// the service as production runs it (harness.ts): profile reads, paid searches (each page new
// leads, announced to the account's webhook), exports as jobs, job polls and export history
// lists. Prints p50 / p95 per operation, the 5xx count, the API's, the worker's and PostgreSQL's
// memory every minute, and at the end the money check (charges equal leads received, every
// account) and the events check (every delivery created received). Exits 1 on any 5xx, any event
// lost or any account whose money disagrees. Bounded: 8 clients pausing 100 ms between requests.

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
  const service = await startService({ leads: 10_000 });
  const receiver = await startReceiver();
  let failed = false;
  try {
    const accounts: { accountId: number; apiKey: string }[] = [];
    for (let i = 0; i < ACCOUNTS; i += 1) {
      const account = await newAccount(service.db, `soak${i}`);
      await createWebhook(service.base, account.apiKey, receiver, `/soak${i}`);
      accounts.push(account);
    }
    const accountOf = (c: number) => accounts[c % ACCOUNTS]!;
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
    };
    // Exports every 40th request (their limit is 5 a minute per key), polls and history lists
    // now and then, searches and profile reads the rest.
    const choose = (_c: number, n: number): Operation =>
      n % 40 === 7
        ? operations.export!
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
    const events = await countEvents(service.db, receiver, 120_000);
    const money = await checkMoney(
      service.db,
      accounts.map((a) => a.accountId),
    );
    const serverErrors = [...counts.serverErrors.values()].reduce((a, b) => a + b, 0);
    console.log(
      `statuses ${statusSummary(counts.byStatus)}; hung ${counts.hung}; jobs ${jobs.length} (completed ${settled.completed}, failed ${settled.failed}, unfinished ${settled.unfinished}); ` +
        `events sent ${events.sent}, received ${events.received}, duplicates ${events.duplicates}, lost ${events.lost}, bad signatures ${events.badSignatures}; ` +
        `money: charged ${money.chargedTenths / 10}, expected ${money.expectedTenths / 10}`,
    );
    const problems = [
      ...(serverErrors ? [`${serverErrors} 5xx answers`] : []),
      ...(counts.hung ? [`${counts.hung} hung requests`] : []),
      ...(settled.unfinished ? [`${settled.unfinished} jobs unfinished`] : []),
      ...(events.lost ? [`${events.lost} events lost`] : []),
      ...(events.badSignatures ? [`${events.badSignatures} bad signatures`] : []),
      ...money.wrong,
    ];
    failed = problems.length > 0;
    console.log(failed ? `FAIL soak: ${problems.join("; ")}` : "PASS soak");
  } finally {
    await receiver.close();
    await service.close();
  }
  process.exit(failed ? 1 : 0);
}

void main();
