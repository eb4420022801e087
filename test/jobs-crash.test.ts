import { sql } from "kysely";
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app/create-app.js";
import type { AppContext } from "../src/app/context.js";
import type { OperationHandlers } from "../src/http/contract.js";
import { runLongRunning } from "../src/jobs/index.js";
import { claimRun } from "../src/jobs/repository.js";
import { storeFinalAnswer } from "../src/jobs/service.js";
import { sweepJobs } from "../src/jobs/tasks/jobs__sweep.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { crashTestJob, startJobRunner, startWorkerProcess, triggerAnswer } from "./helpers/jobs-factories.js";

// A worker process killed (SIGKILL) in the middle of a job: the job is not lost, is finished by
// another worker, and its charge is written exactly once.

const t = useTestApp();

function testHandlers(ctx: AppContext): Partial<OperationHandlers> {
  return {
    async triggerEmailSchedule(request) {
      const scheduleId = request.params.id;
      return runLongRunning(request, ctx, {
        kind: crashTestJob,
        accountId: request.caller.accountId,
        input: { scheduleId, hang: scheduleId === 1 ? "before-commit" : "after-commit" },
      });
    },
  };
}

const children: ChildProcess[] = [];

beforeAll(async () => {
  t.app = createApp(t.ctx, { handlers: testHandlers(t.ctx) });
  await t.ctx.jobs.ensureQueue();
});

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

async function killedMidJob(scheduleId: number, until: (row: { status: string; phase: string }) => boolean) {
  const child = await startWorkerProcess(t.database.url, join(t.ctx.config.dataDir, "files"));
  children.push(child);
  const { auth, accountId } = await buildAccount(t.ctx.db);
  const res = await t
    .request()
    .post(`/api/v1/email-schedules/${scheduleId}/trigger`)
    .set(auth)
    .set("Prefer", "respond-async")
    .expect(202);
  const jobId = res.body.jobId as string;
  await expect
    .poll(
      async () => {
        const row = await t.ctx.db
          .selectFrom("jobs")
          .select(["status", "phase"])
          .where("id", "=", jobId)
          .executeTakeFirstOrThrow();
        return until(row);
      },
      { timeout: 20_000, interval: 100 },
    )
    .toBe(true);
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
  return { auth, accountId, jobId };
}

async function queuedRun(jobId: string) {
  const { rows } = await sql<{ locked_by: string | null; attempts: number }>`
    select locked_by, attempts from graphile_worker.jobs where key = ${`jobs__run:${jobId}`}`.execute(
    t.ctx.db,
  );
  return rows[0];
}

async function chargesOf(accountId: number) {
  return t.ctx.db
    .selectFrom("credit_ledger")
    .select(["reference", "amount_tenths"])
    .where("account_id", "=", accountId)
    .where("kind", "=", "charge")
    .execute();
}

describe("a worker killed mid-job", () => {
  it("before the job committed: the job is retried by another worker and charged once", async () => {
    const { auth, accountId, jobId } = await killedMidJob(1, (row) => row.phase === "sending");
    // The dead worker still holds graphile-worker's lock; nothing was charged.
    expect((await queuedRun(jobId))?.locked_by).toEqual(expect.any(String));
    expect(await chargesOf(accountId)).toEqual([]);
    const running = await t.request().get(`/api/v1/jobs/${jobId}`).set(auth).expect(202);
    expect(running.body.progress).toEqual({ done: 1, total: 2, label: "steps" });

    // A live worker; the sweep sees no heartbeat from the dead one and hands the job back.
    const runner = await startJobRunner(t.ctx);
    try {
      await t.ctx.db
        .updateTable("jobs")
        .set({ heartbeat_at: new Date(Date.now() - 5 * 60_000) })
        .where("id", "=", jobId)
        .execute();
      const swept = await sweepJobs({ db: t.ctx.db, storage: t.ctx.storage, logger: t.ctx.logger });
      expect(swept.unlockedWorkers).toBe(1);
      const done = await t
        .request()
        .get(`/api/v1/jobs/${jobId}`)
        .set(auth)
        .set("Prefer", "wait=20")
        .expect(200);
      expect(done.body.data.message).toBe("run 2");
      expect(done.headers["x-svc-job-status"]).toBe("completed");
      expect(await chargesOf(accountId)).toEqual([{ reference: jobId, amount_tenths: -10 }]);
      await expect.poll(() => queuedRun(jobId), { timeout: 10_000 }).toBeUndefined();
    } finally {
      await runner.stop();
    }
  });

  it("after the job committed: its answer is kept and a rerun charges nothing", async () => {
    const { auth, accountId, jobId } = await killedMidJob(2, (row) => row.status === "completed");
    const done = await t.request().get(`/api/v1/jobs/${jobId}`).set(auth).expect(200);
    expect(done.body.data.message).toBe("run 1");
    expect(await chargesOf(accountId)).toEqual([{ reference: jobId, amount_tenths: -10 }]);

    // graphile-worker retries the dead worker's run (its lock expiring is simulated here).
    const lock = await queuedRun(jobId);
    expect(lock?.locked_by).toEqual(expect.any(String));
    await sql`select graphile_worker.force_unlock_workers(${[lock!.locked_by!]}::text[])`.execute(t.ctx.db);
    const runner = await startJobRunner(t.ctx);
    try {
      await expect.poll(() => queuedRun(jobId), { timeout: 10_000 }).toBeUndefined();
    } finally {
      await runner.stop();
    }
    expect(await chargesOf(accountId)).toEqual([{ reference: jobId, amount_tenths: -10 }]);
    const again = await t.request().get(`/api/v1/jobs/${jobId}`).set(auth).expect(200);
    expect(again.body).toEqual(done.body);
  });

  it("a run taken for dead cannot commit once a later attempt took the job over", async () => {
    const { auth } = await buildAccount(t.ctx.db, { monthlyCredits: 5 });
    // No worker runs here: the job stays queued and the test plays two attempts.
    const accepted = await t
      .request()
      .post("/api/v1/email-schedules/3/trigger")
      .set(auth)
      .set("Prefer", "respond-async")
      .expect(202);
    const jobId = accepted.body.jobId as string;
    const first = await claimRun(t.ctx.db, jobId, "worker-1");
    const second = await claimRun(t.ctx.db, jobId, "worker-2");
    expect([first?.attempts, second?.attempts]).toEqual([1, 2]);
    const answerOf = (run: number) => triggerAnswer(`run ${run}`);
    const commit = (attempt: number) =>
      t.ctx.db.transaction().execute((trx) => storeFinalAnswer(trx, second!, answerOf(attempt), attempt));
    expect(await commit(1)).toBe(false);
    expect(await commit(2)).toBe(true);
    const done = await t.request().get(`/api/v1/jobs/${jobId}`).set(auth).expect(200);
    expect(done.body.data.message).toBe("run 2");
  });

  it("a graceful stop hands the running job back to the queue; the next worker finishes it", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const first = await startJobRunner(t.ctx);
    const res = await t
      .request()
      .post("/api/v1/email-schedules/1/trigger")
      .set(auth)
      .set("Prefer", "respond-async")
      .expect(202);
    const jobId = res.body.jobId as string;
    await expect
      .poll(async () => (await t.request().get(`/api/v1/jobs/${jobId}`).set(auth).expect(202)).body.phase, {
        timeout: 10_000,
      })
      .toBe("sending");
    await first.stop(); // waits for the job, aborts it after graphile-worker's 5 s, releases it
    await expect.poll(async () => (await queuedRun(jobId))?.locked_by, { timeout: 10_000 }).toBeNull();
    const second = await startJobRunner(t.ctx);
    try {
      const done = await t
        .request()
        .get(`/api/v1/jobs/${jobId}`)
        .set(auth)
        .set("Prefer", "wait=30")
        .expect(200);
      expect(done.body.data.message).toBe("run 2");
    } finally {
      await second.stop();
    }
    expect(await chargesOf(accountId)).toEqual([{ reference: jobId, amount_tenths: -10 }]);
  });
});
