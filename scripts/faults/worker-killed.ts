import { api, newAccount, sleep, startService, type ScenarioResult } from "./harness.js";
import { checkMoney, countEvents } from "./counting.js";
import { BROAD_KEYWORDS } from "./postgres-outage.js";
import { createWebhook, startReceiver } from "./receiver.js";

// Scenario 1 (issue 36): the worker killed (SIGKILL) in the middle of webhook deliveries, then
// started again. Paid searches announce their new leads as `lead.created` events to each account's
// webhook; the receiver answers slowly (50 ms) so deliveries are in flight at each kill. Every
// delivery the service created reaches its receiver at least once with the same event id, every
// signature verifies, and the duplicates (deliveries sent again after a kill) are counted.

const ACCOUNTS = 4;
/** Searches per account (each 50 new leads: 50 events). */
const SEARCHES = 12;
const KILLS = 2;

export async function workerKilled(): Promise<ScenarioResult> {
  const service = await startService({ leads: 6_000 });
  const receiver = await startReceiver();
  receiver.answer = () => ({ status: 200, delayMs: 50 });
  try {
    const accounts: { accountId: number; apiKey: string }[] = [];
    for (let i = 0; i < ACCOUNTS; i += 1) {
      const account = await newAccount(service.db, `wk${i}`);
      await createWebhook(service.base, account.apiKey, receiver, `/wk${i}`);
      accounts.push(account);
    }
    const statuses = new Map<number, number>();
    for (let page = 1; page <= SEARCHES; page += 1) {
      await Promise.all(
        accounts.map(async (account) => {
          const res = await api(
            service.base,
            account.apiKey,
            "GET",
            `/leads?positiveKeywords=${BROAD_KEYWORDS}&limit=50&page=${page}`,
          );
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        }),
      );
    }
    const sentBefore = await service.db
      .selectFrom("integration_deliveries")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    let receivedAtKills = 0;
    for (let k = 0; k < KILLS; k += 1) {
      // Kill once deliveries are flowing: some received, more in flight or queued.
      const target = receiver.received.requests + 100;
      const deadline = Date.now() + 20_000;
      while (receiver.received.requests < target && Date.now() < deadline) await sleep(20);
      receivedAtKills = receiver.received.requests;
      await service.worker.kill();
      await sleep(1_000);
      await service.worker.restart();
    }
    const started = Date.now();
    const events = await countEvents(service.db, receiver, 120_000);
    const seconds = (Date.now() - started) / 1000;
    const money = await checkMoney(
      service.db,
      accounts.map((a) => a.accountId),
    );
    const failures: string[] = [...money.wrong];
    if ([...statuses.keys()].some((s) => s !== 200))
      failures.push(`searches answered ${[...statuses].join(";")}`);
    if (events.lost) failures.push(`${events.lost} events lost`);
    if (events.badSignatures) failures.push(`${events.badSignatures} signatures did not verify`);
    if (events.outboxLeft) failures.push(`${events.outboxLeft} outbox rows left`);
    if (events.sent === 0) failures.push("no deliveries were created");
    return {
      name: "worker-killed",
      figures: {
        kills: KILLS,
        createdBeforeKills: Number(sentBefore.n),
        receivedAtLastKill: receivedAtKills,
        sent: events.sent,
        received: events.received,
        duplicates: events.duplicates,
        lost: events.lost,
        badSignatures: events.badSignatures,
        drainSeconds: Math.round(seconds),
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
