import { describe, expect, it } from "vitest";
import { chargeDelivery, type EntryWait } from "../src/credits/charge.js";
import { chargeCredits, grantCredits, lockAccountCredits, readBalance } from "../src/credits/ledger.js";
import { costTenths, PRICE_TENTHS } from "../src/credits/price.js";
import { setLockTimeout } from "../src/db/lock-timeout.js";
import { sql } from "kysely";
import { spendable } from "../src/credits/spendable.js";
import { findAccountWithBalance } from "../src/accounts/repository.js";
import { recordDeliveredLeads, startLeadDelivery } from "../src/leads/versions.js";
import { useJobRunner, useTestApp } from "./helpers/app.js";
import { holdChargeLock, holdEntries, waitForLockWaiters } from "./helpers/charge-lock.js";
import { binary } from "./helpers/export-factories.js";
import { csvRecords } from "./helpers/export-job-factories.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLead, buildLeads, uniqueWord } from "./helpers/leads-factories.js";

// The one charging path of deliveries (src/credits/charge.ts), alone and shared by GET /leads
// (src/leads/search/service.ts) and the export job (src/exports/job/run.ts).

const t = useTestApp();
useJobRunner(t);

type Auth = { Authorization: string };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Delivers leads to an account through chargeDelivery, in a transaction of its own. */
function deliver(accountId: number, leadIds: number[], entryWait: EntryWait = "bounded") {
  return t.ctx.db.transaction().execute((trx) =>
    chargeDelivery(trx, {
      accountId,
      reason: "test_delivery",
      reference: "test",
      entryWait,
      deliver: async (trx) => ({
        lead: await recordDeliveredLeads(trx, { accountId, method: "api", exportedAt: new Date(), leadIds }),
      }),
    }),
  );
}

/**
 * deliver, with the credit lock taken by the entries' statement (as GET /leads does); `taken`
 * tells whether the step took it.
 */
async function deliverLockingInStatement(accountId: number, leadIds: number[]) {
  let taken = false;
  let lockTimeout = "";
  const charged = await t.ctx.db.transaction().execute((trx) =>
    chargeDelivery(trx, {
      accountId,
      reason: "test_delivery",
      reference: "test",
      entryWait: "bounded",
      deliver: async (trx, creditLock) => {
        const started = await startLeadDelivery(trx, { accountId, method: "api" });
        const lead = await started.record(leadIds, new Date(), creditLock);
        taken = creditLock?.taken !== undefined;
        const { rows } = await sql<{ s: string }>`select current_setting('lock_timeout') as s`.execute(trx);
        lockTimeout = rows[0]!.s;
        return { lead };
      },
    }),
  );
  return { ...charged, taken, lockTimeout };
}

async function chargesOf(accountId: number) {
  return t.ctx.db
    .selectFrom("credit_ledger")
    .select(["bucket", "amount_tenths", "reason", "reference"])
    .where("account_id", "=", accountId)
    .where("kind", "=", "charge")
    .orderBy("id")
    .execute();
}

async function historyOf(accountId: number): Promise<number[]> {
  const rows = await t.ctx.db
    .selectFrom("lead_export_history")
    .select("lead_id")
    .where("account_id", "=", accountId)
    .orderBy("lead_id")
    .execute();
  return rows.map((r) => r.lead_id);
}

async function spendableTenthsOf(accountId: number): Promise<number> {
  const found = await findAccountWithBalance(t.ctx.db, accountId);
  return spendable(found!.balance).tenths;
}

function search(auth: Auth, word: string) {
  return t
    .request()
    .get("/api/v1/leads")
    .query({ positiveKeywords: word, sortBy: "id", sortOrder: "asc" })
    .set(auth);
}

/** Starts an export job (202) and answers its id once the job is waiting for the credit lock or past it. */
async function startExport(auth: Auth, word: string): Promise<string> {
  const accepted = await t
    .request()
    .post("/api/v1/leads/export")
    .set(auth)
    .set("Prefer", "respond-async")
    .set("Accept", "text/csv")
    .send({ positiveKeywords: [word] })
    .expect(202);
  return accepted.body.jobId as string;
}

async function phaseOf(jobId: string): Promise<string | null> {
  const row = await t.ctx.db
    .selectFrom("jobs")
    .select("phase")
    .where("id", "=", jobId)
    .executeTakeFirstOrThrow();
  return row.phase;
}

/** The export job's final answer (its CSV as a Buffer when it succeeded). */
function exportAnswer(auth: Auth, jobId: string) {
  return t
    .request()
    .get(`/api/v1/jobs/${jobId}`)
    .set(auth)
    .set("Prefer", "wait=20")
    .buffer(true)
    .parse(binary);
}

describe("chargeDelivery", () => {
  it("charges the new items at their price as ledger rows, monthly first, and answers the balance after", async () => {
    const { accountId } = await buildAccount(t.ctx.db, { monthlyCredits: 2, permanentCredits: 3 });
    const leadIds = await buildLeads(t.ctx.db, 3, () => ({}));
    expect(costTenths({ lead: 3 })).toBe(3 * PRICE_TENTHS.lead);

    expect(await deliver(accountId, leadIds)).toEqual({ tenths: 30, remainingTenths: 20 });
    expect(await chargesOf(accountId)).toEqual([
      { bucket: "monthly", amount_tenths: -20, reason: "test_delivery", reference: "test" },
      { bucket: "permanent", amount_tenths: -10, reason: "test_delivery", reference: "test" },
    ]);
    expect(await historyOf(accountId)).toEqual(leadIds);

    // Delivered again: nothing new, nothing charged (the sticky rule), in either entry wait.
    expect(await deliver(accountId, leadIds, "unbounded")).toEqual({ tenths: 0, remainingTenths: 20 });
    expect(await chargesOf(accountId)).toHaveLength(2);
  });

  it("the balance after a charge, from the charge's own statement, is the ledger's sum in every bucket", async () => {
    const { accountId } = await buildAccount(t.ctx.db, { monthlyCredits: 2, permanentCredits: 3 });
    await grantCredits(t.ctx.db, { accountId, bucket: "overage", tenths: 50, reason: "test" });
    for (const tenths of [5, 30, 0, 25]) {
      const { after, read } = await t.ctx.db.transaction().execute(async (trx) => {
        const { periodStart } = await lockAccountCredits(trx, accountId);
        const after = await chargeCredits(trx, { accountId, periodStart, tenths, reason: "test" });
        return { after, read: await readBalance(trx, accountId, periodStart) };
      });
      expect(after).toEqual(read);
    }
    // 60 tenths spent: monthly 20, permanent 30, overage 10 of 50.
    const final = await t.ctx.db.transaction().execute(async (trx) => {
      const { periodStart } = await lockAccountCredits(trx, accountId);
      return readBalance(trx, accountId, periodStart);
    });
    expect(final).toMatchObject({
      monthlyRemainingTenths: 0,
      monthlyUsedTenths: 20,
      permanentTenths: 0,
      overageTenths: 40,
    });
    // More than is left: null, nothing written.
    const refused = await t.ctx.db.transaction().execute(async (trx) => {
      const { periodStart } = await lockAccountCredits(trx, accountId);
      return chargeCredits(trx, { accountId, periodStart, tenths: 41, reason: "test" });
    });
    expect(refused).toBeNull();
  });

  it("the credit lock, taken within the charge's 2 s, leaves later waits of the transaction unbounded", async () => {
    const { accountId } = await buildAccount(t.ctx.db);
    const settings = await t.ctx.db.transaction().execute(async (trx) => {
      await setLockTimeout(trx, 2_000);
      const { rows: before } = await sql<{ s: string }>`select current_setting('lock_timeout') as s`.execute(
        trx,
      );
      const locked = await lockAccountCredits(trx, accountId, { thenWaitUnbounded: true });
      const { rows: after } = await sql<{ s: string }>`select current_setting('lock_timeout') as s`.execute(
        trx,
      );
      return { before: before[0]!.s, after: after[0]!.s, notified: locked.lowBalanceNotified };
    });
    expect(settings).toEqual({ before: "2s", after: "0", notified: false });
  });

  it("402 insufficient_credits when the balance does not pay: the delivery's entries roll back, nothing charged", async () => {
    const { accountId } = await buildAccount(t.ctx.db, { monthlyCredits: 2, permanentCredits: 0 });
    const leadIds = await buildLeads(t.ctx.db, 3, () => ({}));
    await expect(deliver(accountId, leadIds)).rejects.toMatchObject({
      status: 402,
      code: "insufficient_credits",
    });
    expect(await chargesOf(accountId)).toEqual([]);
    expect(await historyOf(accountId)).toEqual([]);
    expect(await spendableTenthsOf(accountId)).toBe(20);
  });

  it("429 charge_in_progress (Retry-After 30) when the credit lock is not free within 2 s; nothing charged or recorded", async () => {
    const { accountId } = await buildAccount(t.ctx.db, { monthlyCredits: 5 });
    const leadIds = await buildLeads(t.ctx.db, 2, () => ({}));
    const lock = await holdChargeLock(t.ctx.db, accountId);
    try {
      const ways = [
        () => deliver(accountId, leadIds, "bounded"),
        () => deliver(accountId, leadIds, "unbounded"),
        // The credit lock taken at the end of the entries' statement (as GET /leads does).
        () => deliverLockingInStatement(accountId, leadIds),
      ];
      for (const way of ways) {
        const started = Date.now();
        await expect(way()).rejects.toMatchObject({
          status: 429,
          code: "charge_in_progress",
          headers: { "Retry-After": "30" },
        });
        expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
      }
    } finally {
      await lock.release();
    }
    expect(await chargesOf(accountId)).toEqual([]);
    expect(await historyOf(accountId)).toEqual([]);
  });

  it("bounded: waiting more than 2 s for a concurrent delivery's entries is 429 charge_in_progress", async () => {
    const { accountId } = await buildAccount(t.ctx.db, { monthlyCredits: 5 });
    const [held, free] = await buildLeads(t.ctx.db, 2, () => ({}));
    const other = await holdEntries(t.ctx.db, accountId, [held!]);
    try {
      await expect(deliver(accountId, [held!, free!], "bounded")).rejects.toMatchObject({
        status: 429,
        code: "charge_in_progress",
      });
    } finally {
      await other.rollback();
    }
    expect(await chargesOf(accountId)).toEqual([]);
    expect(await historyOf(accountId)).toEqual([]);
  });

  it("unbounded: waits for a concurrent delivery's entries as long as it runs, then charges what is still new", async () => {
    const { accountId } = await buildAccount(t.ctx.db, { monthlyCredits: 5 });
    const [held, free] = await buildLeads(t.ctx.db, 2, () => ({}));
    const other = await holdEntries(t.ctx.db, accountId, [held!]);
    let settled = false;
    const charging = deliver(accountId, [held!, free!], "unbounded");
    void charging.then(
      () => (settled = true),
      () => (settled = true),
    );
    try {
      await waitForLockWaiters(t.ctx.db, 1);
      await sleep(2_300);
      expect(settled).toBe(false);
    } finally {
      await other.commit();
    }
    // The other delivery committed `held` (free now, the sticky rule): only `free` is charged.
    expect(await charging).toEqual({ tenths: 10, remainingTenths: 40 });
    expect(await historyOf(accountId)).toEqual([held, free]);
  });

  it("a delivery step may end its entries' statement with the credit lock: taken once, then waits are unbounded", async () => {
    const { accountId } = await buildAccount(t.ctx.db, { monthlyCredits: 5 });
    const leadIds = await buildLeads(t.ctx.db, 2, () => ({}));
    const charged = await deliverLockingInStatement(accountId, leadIds);
    expect(charged).toEqual({ tenths: 20, remainingTenths: 30, taken: true, lockTimeout: "0" });
    expect(await historyOf(accountId)).toEqual(leadIds);
    expect(await chargesOf(accountId)).toEqual([
      { bucket: "monthly", amount_tenths: -20, reason: "test_delivery", reference: "test" },
    ]);
  });

  it("never holds the credit lock while its delivery step waits: the account's other charges go through", async () => {
    const ways = [
      { wait: (accountId: number, ids: number[]) => deliver(accountId, ids, "unbounded"), extra: {} },
      // The credit lock at the end of the entries' statement: only once the entries are written.
      {
        wait: (accountId: number, ids: number[]) => deliverLockingInStatement(accountId, ids),
        extra: { taken: true, lockTimeout: "0" },
      },
    ];
    for (const { wait, extra } of ways) {
      const { accountId } = await buildAccount(t.ctx.db, { monthlyCredits: 5 });
      const [held, other] = await buildLeads(t.ctx.db, 2, () => ({}));
      const holder = await holdEntries(t.ctx.db, accountId, [held!]);
      const waiting = wait(accountId, [held!]);
      waiting.catch(() => undefined);
      try {
        await waitForLockWaiters(t.ctx.db, 1);
        expect(await deliver(accountId, [other!], "bounded")).toEqual({ tenths: 10, remainingTenths: 40 });
      } finally {
        await holder.rollback();
      }
      expect(await waiting).toEqual({ tenths: 10, remainingTenths: 30, ...extra });
    }
  });
});

describe("GET /leads and POST /leads/export of one account at the same time", () => {
  it("an export holding its entries: the search of the same leads waits for it and charges nothing (each lead once)", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db, { monthlyCredits: 10, permanentCredits: 0 });
    const word = uniqueWord();
    const leadIds = await buildLeads(t.ctx.db, 4, (i) => ({ company_name: `${word} ${i}` }));
    const lock = await holdChargeLock(t.ctx.db, accountId);
    let jobId = "";
    let searching: Promise<{ status: number; body: { data: { creditsUsed: number; leads: unknown[] } } }>;
    try {
      jobId = await startExport(auth, word);
      // The export recorded its entries and waits for the credit lock.
      await expect.poll(() => phaseOf(jobId), { timeout: 20_000, interval: 20 }).toBe("charging");
      await waitForLockWaiters(t.ctx.db, 1);
      searching = search(auth, word).then((r) => r);
      // The search waits for the export's entries (a waiter blocked by a waiter).
      await waitForLockWaiters(t.ctx.db, 1, true);
    } finally {
      await lock.release();
    }
    const found = await searching!;
    expect(found.status).toBe(200);
    expect(found.body.data).toMatchObject({ creditsUsed: 0, creditsRemaining: 6 });
    expect(found.body.data.leads).toHaveLength(4);
    const exported = await exportAnswer(auth, jobId).expect(200);
    expect(csvRecords(exported.body as Buffer)).toHaveLength(4);
    expect(await chargesOf(accountId)).toEqual([
      { bucket: "monthly", amount_tenths: -40, reason: "lead_export", reference: jobId },
    ]);
    expect(await historyOf(accountId)).toEqual(leadIds);
  });

  it("a search holding its entries: the export of the same leads waits for it (past 2 s too) and charges only the rest", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db, { monthlyCredits: 10, permanentCredits: 0 });
    const word = uniqueWord();
    const searched = uniqueWord();
    // The export's first lead (lowest id) is held by a third delivery, so the export waits for it
    // before it takes any entry; the search takes the others meanwhile.
    const first = await buildLead(t.ctx.db, { company_name: `${word} first` });
    const leadIds = await buildLeads(t.ctx.db, 4, (i) => ({ company_name: `${word} ${searched} ${i}` }));
    const third = await holdEntries(t.ctx.db, accountId, [first]);
    const lock = await holdChargeLock(t.ctx.db, accountId);
    let jobId = "";
    let searching: Promise<{ status: number; body: { data: { creditsUsed: number } } }>;
    try {
      try {
        jobId = await startExport(auth, word);
        await waitForLockWaiters(t.ctx.db, 1);
        // Longer than the 2 s a search would wait: the export job keeps waiting.
        await sleep(2_300);
        expect(await phaseOf(jobId)).toBe("writing");
        searching = search(auth, searched).then((r) => r);
        // The search recorded its entries and waits for the credit lock.
        await waitForLockWaiters(t.ctx.db, 2);
      } finally {
        await third.rollback();
      }
      // The export now waits for the search's entries.
      await waitForLockWaiters(t.ctx.db, 1, true);
    } finally {
      await lock.release();
    }
    const found = await searching!;
    expect(found.status).toBe(200);
    expect(found.body.data.creditsUsed).toBe(4);
    const exported = await exportAnswer(auth, jobId).expect(200);
    expect(csvRecords(exported.body as Buffer)).toHaveLength(5);
    expect(await chargesOf(accountId)).toEqual([
      { bucket: "monthly", amount_tenths: -40, reason: "lead_search", reference: "search" },
      { bucket: "monthly", amount_tenths: -10, reason: "lead_export", reference: jobId },
    ]);
    expect(await historyOf(accountId)).toEqual([first, ...leadIds]);
  });

  it("when the balance pays for only one of them: one is charged with its entries, the other gets 402 and records nothing", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db, { monthlyCredits: 4, permanentCredits: 0 });
    const exportWord = uniqueWord();
    const searchWord = uniqueWord();
    const exportLeads = await buildLeads(t.ctx.db, 4, (i) => ({ company_name: `${exportWord} ${i}` }));
    const searchLeads = await buildLeads(t.ctx.db, 4, (i) => ({ company_name: `${searchWord} ${i}` }));
    const lock = await holdChargeLock(t.ctx.db, accountId);
    let jobId = "";
    let searching: Promise<{ status: number; body: { error?: string } }>;
    try {
      jobId = await startExport(auth, exportWord);
      await expect.poll(() => phaseOf(jobId), { timeout: 20_000, interval: 20 }).toBe("charging");
      await waitForLockWaiters(t.ctx.db, 1);
      searching = search(auth, searchWord).then((r) => r);
      // Both recorded their entries (each capped at the 4 credits it read) and wait to charge.
      await waitForLockWaiters(t.ctx.db, 2);
    } finally {
      await lock.release();
    }
    const found = await searching!;
    const exported = await exportAnswer(auth, jobId);
    expect([found.status, exported.status].sort()).toEqual([200, 402]);
    const charges = await chargesOf(accountId);
    expect(charges).toHaveLength(1);
    expect(charges[0]!.amount_tenths).toBe(-40);
    const files = await t.ctx.db
      .selectFrom("export_history")
      .select("id")
      .where("account_id", "=", accountId)
      .execute();
    if (found.status === 200) {
      expect(JSON.parse((exported.body as Buffer).toString())).toMatchObject({
        error: "insufficient_credits",
      });
      expect(charges[0]!.reason).toBe("lead_search");
      expect(await historyOf(accountId)).toEqual(searchLeads);
      expect(files).toEqual([]);
    } else {
      expect(found.body.error).toBe("insufficient_credits");
      expect(charges[0]!.reason).toBe("lead_export");
      expect(await historyOf(accountId)).toEqual(exportLeads);
      expect(files).toHaveLength(1);
    }
  });

  it("a search whose leads a concurrent delivery holds for more than 2 s answers 429 charge_in_progress", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db, { monthlyCredits: 5 });
    const word = uniqueWord();
    const [held] = await buildLeads(t.ctx.db, 2, (i) => ({ company_name: `${word} ${i}` }));
    const other = await holdEntries(t.ctx.db, accountId, [held!]);
    // Ends the other delivery after 4 s, should the search wait for it that long.
    const timer = setTimeout(() => void other.rollback(), 4_000);
    try {
      const res = await search(auth, word);
      expect(res.status).toBe(429);
      expect(res.body.error).toBe("charge_in_progress");
      expect(res.headers["retry-after"]).toBe("30");
    } finally {
      clearTimeout(timer);
      await other.rollback();
    }
    expect(await chargesOf(accountId)).toEqual([]);
    expect(await historyOf(accountId)).toEqual([]);
  });
});
