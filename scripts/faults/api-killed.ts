import { api, moneyOf, newAccount, sleep, startService, type ScenarioResult } from "./harness.js";
import { checkMoney, settleJobs } from "./counting.js";
import { BROAD_KEYWORDS } from "./postgres-outage.js";
import { buyerLoop, buySubscription, checkPurchases, startPayments } from "./purchases.js";
import { startTraffic, statusSummary, type Operation } from "./traffic.js";

// Scenario 7 (issue 36): the API process killed (SIGKILL) in the middle of paid searches and
// exports, then started again. Whatever was cut, each account's charges equal the leads its lead
// export history says it received, its balance (GET /me) equals its ledger, and every export job
// accepted before a kill still finishes (the worker runs it).

const CLIENTS = 6;
/** Buyers of credits (each its own subscription at the local payment processor). */
const BUYERS = 2;
const KILLS = 3;
/** Time between two kills (traffic runs all along). */
const INTERVAL_MS = 5_000;

export async function apiKilled(): Promise<ScenarioResult> {
  const payments = await startPayments();
  const service = await startService({ leads: 4_000, env: payments.env });
  try {
    const buyers: Awaited<ReturnType<typeof buySubscription>>[] = [];
    for (let i = 0; i < BUYERS; i += 1) buyers.push(await buySubscription(service, payments, i));
    const accounts: { accountId: number; apiKey: string }[] = [];
    for (let i = 0; i < CLIENTS; i += 1) accounts.push(await newAccount(service.db, `kill${i}`));
    const pages = new Map<number, number>();
    const jobs: { key: string; id: string }[] = [];
    const search: Operation = {
      name: "search",
      request: (c) => {
        const page = (pages.get(c) ?? 0) + 1;
        pages.set(c, page);
        return {
          key: accounts[c]!.apiKey,
          method: "GET",
          path: `/leads?positiveKeywords=${BROAD_KEYWORDS}&limit=25&page=${page}`,
        };
      },
    };
    const exportLeads: Operation = {
      name: "export",
      request: (c) => ({
        key: accounts[c]!.apiKey,
        method: "POST",
        path: "/leads/export",
        body: { filters: { positiveKeywords: BROAD_KEYWORDS.split(",") }, maxCredits: 20 },
        headers: { prefer: "respond-async, wait=1" },
      }),
      answered: (status, _body, headers, key) => {
        const id = headers.get("x-svc-job-id");
        if (id && (status === 202 || status === 200)) jobs.push({ key, id });
      },
    };
    const choose = (_c: number, n: number) => (n % 25 === 3 ? exportLeads : search);
    const traffic = startTraffic(service.base, choose, CLIENTS, { pauseMs: 50 });
    let buying = true;
    const buyerRuns = buyers.map((buyer, i) => buyerLoop(service, buyer, () => buying, `b${i}`));
    let restartMs = 0;
    for (let k = 0; k < KILLS; k += 1) {
      await sleep(INTERVAL_MS * (0.5 + Math.random()));
      traffic.mark(`kill${k}`);
      const started = Date.now();
      await service.api.restart();
      restartMs = Math.max(restartMs, Date.now() - started);
    }
    await sleep(INTERVAL_MS);
    const counts = await traffic.stop();
    buying = false;
    const bought = await Promise.all(buyerRuns);
    const purchases = await checkPurchases(service, payments, buyers);
    const settled = await settleJobs(service.base, jobs, 90_000);

    const money = await checkMoney(
      service.db,
      accounts.map((a) => a.accountId),
    );
    const failures: string[] = [...money.wrong, ...purchases.failures];
    const purchaseAnswers = new Map<number, number>();
    for (const run of bought)
      for (const [s, n] of run.answered) purchaseAnswers.set(s, (purchaseAnswers.get(s) ?? 0) + n);
    if ([...purchaseAnswers.keys()].some((s) => s >= 500))
      failures.push(`purchases answered ${statusSummary(purchaseAnswers)}`);
    // Each buyer sent every Idempotency-Key until it got an answer: one payment per answered key.
    const answeredPurchases = [...purchaseAnswers.entries()]
      .filter(([s]) => s === 200 || s === 402)
      .reduce((sum, [, n]) => sum + n, 0);
    const paidAttempts = payments.stripe.paymentIntents.filter((p) =>
      buyers.some((b) => b.customerId === p.customer),
    ).length;
    if (paidAttempts > answeredPurchases) {
      failures.push(
        `${paidAttempts - answeredPurchases} purchase(s) charged again when retried with the same Idempotency-Key`,
      );
    }
    // The balance the API reports is the ledger's.
    for (const account of accounts) {
      const me = await api(service.base, account.apiKey, "GET", "/me");
      const data = me.body.data as { totalCreditsRemaining?: number } | undefined;
      const ledger = await moneyOf(service.db, account.accountId);
      if (me.status !== 200 || data?.totalCreditsRemaining !== ledger.balanceTenths / 10) {
        failures.push(
          `account ${account.accountId}: /me ${me.status} ${data?.totalCreditsRemaining} vs ledger ${ledger.balanceTenths / 10}`,
        );
      }
    }
    const fiveHundreds = [...counts.byStatus.entries()].filter(([s]) => s >= 500);
    if (fiveHundreds.length) failures.push(`5xx answers: ${statusSummary(new Map(fiveHundreds))}`);
    if (counts.hung) failures.push(`${counts.hung} requests hung`);
    if (settled.unfinished) failures.push(`${settled.unfinished} accepted export jobs never finished`);
    if (settled.failed)
      failures.push(`${settled.failed} export jobs failed: ${settled.failures.slice(0, 3).join(", ")}`);
    return {
      name: "api-killed",
      figures: {
        kills: KILLS,
        requests: counts.requests,
        statuses: statusSummary(counts.byStatus),
        cut: counts.networkErrors,
        slowestRestartMs: restartMs,
        jobs: jobs.length,
        jobsCompleted: settled.completed,
        leads: money.expectedTenths / 10,
        purchases: statusSummary(purchaseAnswers),
        purchasesCut: bought.reduce((sum, r) => sum + r.retriedAfterCut, 0),
        paid: purchases.paid,
        chargedAgain: Math.max(0, paidAttempts - answeredPurchases),
        granted: purchases.granted,
        charged: money.chargedTenths / 10,
        expectedCharge: money.expectedTenths / 10,
      },
      failures,
    };
  } finally {
    await service.close();
    await payments.close();
  }
}
