import { api, newAccount, sleep, startService, type ScenarioResult } from "./harness.js";
import { checkMoney, countEvents, settleJobs } from "./counting.js";
import { createWebhook, startReceiver } from "./receiver.js";
import { startTraffic, statusSummary, type Operation } from "./traffic.js";

// Scenario 3 (issue 36): PostgreSQL stopped for 10 s under API traffic, then started. While it is
// down every request answers 503 `service_unavailable` with Retry-After (no 500, no hung
// request); the API and the worker carry on afterwards without a restart; every accepted job
// finishes, every event created reaches its receiver, and the money agrees.

/** One account per client (its own rate limits and pages). */
const CLIENTS = 6;
/** Searches ask for these keywords: most generated leads match one. */
export const BROAD_KEYWORDS = "repair,family,premier,golden,summit,marketing,spa,towing,solar,garage";
const BEFORE_MS = 6_000;
const OUTAGE_MS = 10_000;
const AFTER_MS = 10_000;

export async function postgresOutage(): Promise<ScenarioResult> {
  const service = await startService({ leads: 4_000 });
  const receiver = await startReceiver();
  try {
    const accounts: { accountId: number; apiKey: string }[] = [];
    for (let i = 0; i < CLIENTS; i += 1) {
      const account = await newAccount(service.db, `pg${i}`);
      await createWebhook(service.base, account.apiKey, receiver, `/pg${i}`);
      accounts.push(account);
    }
    const pages = new Map<number, number>();
    const jobs: { key: string; id: string }[] = [];
    const keyOf = (client: number) => accounts[client]!.apiKey;
    const operations: Operation[] = [
      { name: "me", request: (c) => ({ key: keyOf(c), method: "GET", path: "/me" }) },
      {
        name: "search",
        request: (c) => {
          // Each account walks its own pages: every answer is new leads, charged and announced.
          const page = (pages.get(c) ?? 0) + 1;
          pages.set(c, page);
          return {
            key: keyOf(c),
            method: "GET",
            path: `/leads?positiveKeywords=${BROAD_KEYWORDS}&limit=5&page=${page}`,
          };
        },
      },
      {
        name: "export",
        request: (c) => ({
          key: keyOf(c),
          method: "POST",
          path: "/leads/export",
          body: { filters: { positiveKeywords: BROAD_KEYWORDS.split(",") }, maxCredits: 5 },
          headers: { prefer: "respond-async, wait=2" },
        }),
        answered: (status, _body, headers, key) => {
          const id = headers.get("x-svc-job-id");
          if (id && (status === 202 || status === 200)) jobs.push({ key, id });
        },
      },
    ];
    // Mostly profile reads and paid searches; an export every 60th request (their limit: 5 a minute).
    const [me, search, exportLeads] = operations as [Operation, Operation, Operation];
    const choose = (_c: number, n: number) => (n % 60 === 5 ? exportLeads : n % 2 ? search : me);
    const traffic = startTraffic(service.base, choose, CLIENTS, { pauseMs: 150 });
    await sleep(BEFORE_MS);
    traffic.mark("outage");
    const outageStarted = Date.now();
    await service.postgres.stop();
    await sleep(Math.max(0, OUTAGE_MS - (Date.now() - outageStarted)));
    await service.postgres.start();
    traffic.mark("after");
    await sleep(AFTER_MS);
    const counts = await traffic.stop();

    // Recovered without a restart: the same processes answer and work.
    const fresh = await newAccount(service.db, "pg-after");
    const recovered = await api(service.base, fresh.apiKey, "GET", "/me").catch(() => undefined);
    const settled = await settleJobs(service.base, jobs, 60_000);
    const events = await countEvents(service.db, receiver, 90_000);
    const money = await checkMoney(
      service.db,
      accounts.map((a) => a.accountId),
    );
    const outage = counts.windows.get("outage") ?? new Map();
    const failures: string[] = [];
    const fiveHundreds = [...counts.byStatus.entries()].filter(([s]) => s >= 500 && s !== 503);
    if (fiveHundreds.length) failures.push(`5xx other than 503: ${statusSummary(new Map(fiveHundreds))}`);
    if (counts.hung) failures.push(`${counts.hung} requests hung`);
    if (counts.unavailableWithoutRetryAfter)
      failures.push(`${counts.unavailableWithoutRetryAfter} 503 without Retry-After`);
    if (counts.unavailableOtherCode) failures.push(`${counts.unavailableOtherCode} 503 with another code`);
    if (!outage.get(503)) failures.push("no 503 during the outage");
    if (recovered?.status !== 200) failures.push(`GET /me after the outage answered ${recovered?.status}`);
    if (service.api.child.exitCode !== null || service.worker.child.exitCode !== null) {
      failures.push("a service process exited");
    }
    if (settled.unfinished) failures.push(`${settled.unfinished} accepted jobs never finished`);
    if (events.lost) failures.push(`${events.lost} events lost`);
    if (events.outboxLeft) failures.push(`${events.outboxLeft} outbox rows left`);
    if (events.badSignatures) failures.push(`${events.badSignatures} bad signatures`);
    failures.push(...money.wrong);
    return {
      name: "postgres-outage",
      figures: {
        requests: counts.requests,
        statuses: statusSummary(counts.byStatus),
        outage: statusSummary(outage),
        hung: counts.hung,
        slowestMs: counts.slowestMs,
        jobs: jobs.length,
        jobsCompleted: settled.completed,
        jobsFailed: settled.failed,
        sent: events.sent,
        received: events.received,
        duplicates: events.duplicates,
        lost: events.lost,
        charged: money.chargedTenths / 10,
        expectedCharge: money.expectedTenths / 10,
      },
      failures,
    };
  } finally {
    await receiver.close();
    await service.close();
  }
}
