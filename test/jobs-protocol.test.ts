import type { Runner } from "graphile-worker";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { chargeCredits, lockAccountCredits } from "../src/credits/ledger.js";
import { createApp } from "../src/app/create-app.js";
import type { AppContext } from "../src/app/context.js";
import type { OperationHandlers } from "../src/http/contract.js";
import { errors } from "../src/http/errors.js";
import { defineJobKind, JOB_LIFETIMES, runLongRunning } from "../src/jobs/index.js";
import { sweepJobs } from "../src/jobs/tasks/jobs__sweep.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount, buildKey } from "./helpers/factories.js";
import { Gates, startJobRunner, triggerAnswer } from "./helpers/jobs-factories.js";

const t = useTestApp();
const gates = new Gates();
/** Runs of each test kind's work, by gate name: a replay must not run anything again. */
const runs = new Map<string, number>();
const countRun = (name: string) => runs.set(name, (runs.get(name) ?? 0) + 1);

/** Schedule trigger stand-in: waits for gate `s<id>`, then charges 1 credit with its answer. */
const triggerJob = defineJobKind<{ scheduleId: number }, "triggerEmailSchedule">({
  kind: "test_trigger",
  operation: "triggerEmailSchedule",
  capacity: 5,
  timeoutMs: 60_000,
  ...JOB_LIFETIMES.scheduleTrigger,
  async run(input, job) {
    const gate = `s${input.scheduleId}`;
    await job.progress({ phase: "waiting", done: 1, total: 3, label: "steps" });
    await gates.waitFor(gate, job.signal);
    countRun(gate);
    const answer = triggerAnswer(`schedule ${input.scheduleId}`);
    await job.db.transaction().execute(async (trx) => {
      const { periodStart } = await lockAccountCredits(trx, job.accountId);
      await chargeCredits(trx, {
        accountId: job.accountId,
        periodStart,
        tenths: 10,
        reason: "test_job",
        reference: job.jobId,
      });
      await job.commit(trx, answer);
    });
    return answer;
  },
});

/** A kind that never finishes within its 300 ms limit. */
const slowJob = defineJobKind<{ scheduleId: number }, "triggerEmailSchedule">({
  kind: "test_slow",
  operation: "triggerEmailSchedule",
  capacity: 5,
  timeoutMs: 300,
  async run(_input, job) {
    await new Promise((_resolve, reject) =>
      job.signal.addEventListener("abort", () => reject(new Error("aborted"))),
    );
    return triggerAnswer("never");
  },
});

/** Export stand-in: `maxLeads` 402 fails with insufficient_credits; else a CSV of maxLeads rows. */
const exportJob = defineJobKind<{ maxLeads: number; gate: string | null }, "exportLeads">({
  kind: "test_export",
  operation: "exportLeads",
  capacity: 3,
  keyKeepingStatuses: [402],
  async run(input, job) {
    if (input.gate) await gates.waitFor(input.gate, job.signal);
    if (input.gate) countRun(input.gate);
    if (input.maxLeads === 402) throw errors.insufficientCredits("A concurrent request spent the balance.");
    const rows = Array.from({ length: input.maxLeads }, (_, i) => `lead ${i + 1},example${i + 1}.com`);
    const storageKey = `jobs/${job.jobId}/leads.csv`;
    await job.storage.put(storageKey, Buffer.from(["companyName,website", ...rows].join("\n") + "\n"));
    return {
      status: 200,
      file: { storageKey, contentType: "text/csv", fileName: "leads-main-2026-11-22.csv" },
    };
  },
});

const suggestJob = defineJobKind<{ companyName: string }, "suggestCategories">({
  kind: "test_suggest",
  operation: "suggestCategories",
  capacity: 3,
  async run(input) {
    return {
      status: 200,
      body: {
        data: { categories: [`${input.companyName} suppliers`], websiteAnalysisFailed: false },
      },
    };
  },
});

/** The long-running endpoints of the contract, served by the test kinds. */
function testHandlers(ctx: AppContext): Partial<OperationHandlers> {
  return {
    async triggerEmailSchedule(request) {
      const scheduleId = request.params.id;
      const kind = scheduleId >= 900_000 ? slowJob : triggerJob;
      return runLongRunning(request, ctx, {
        kind,
        accountId: request.caller.accountId,
        input: { scheduleId },
      });
    },
    async exportLeads(request) {
      const body = request.body as { maxLeads?: number; positiveKeywords?: string[] };
      const gate = body.positiveKeywords?.find((k) => k.startsWith("gate-")) ?? null;
      return runLongRunning(request, ctx, {
        kind: exportJob,
        accountId: request.caller.accountId,
        input: { maxLeads: body.maxLeads ?? 1, gate },
      });
    },
    async suggestCategories(request) {
      return runLongRunning(request, ctx, {
        kind: suggestJob,
        accountId: request.caller.accountId,
        input: { companyName: request.body.companyName },
      });
    },
  };
}

let runner: Runner;
let nextSchedule = 1;
const newSchedule = () => nextSchedule++;

beforeAll(async () => {
  t.app = createApp(t.ctx, { handlers: testHandlers(t.ctx) });
  runner = await startJobRunner(t.ctx);
});

afterEach(() => gates.releaseAll());

afterAll(async () => {
  await runner?.stop();
});

const trigger = (id: number) => `/api/v1/email-schedules/${id}/trigger`;
const pollUrl = (jobId: string) => `/api/v1/jobs/${jobId}`;
const exportBody = (extra: Record<string, unknown> = {}) => ({ positiveKeywords: ["plumber"], ...extra });
/** POST /leads/export with an Idempotency-Key and the test export body plus `extra`. */
const exportWithKey = (auth: Record<string, string>, key: string, extra: Record<string, unknown> = {}) =>
  t.request().post("/api/v1/leads/export").set(auth).set("Idempotency-Key", key).send(exportBody(extra));

async function charges(accountId: number) {
  return t.ctx.db
    .selectFrom("credit_ledger")
    .select(["reference", "amount_tenths"])
    .where("account_id", "=", accountId)
    .where("kind", "=", "charge")
    .execute();
}

describe("a long-running request", () => {
  it("answers directly when the work finishes within the wait", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const id = newSchedule();
    gates.release(`s${id}`);
    const res = await t.request().post(trigger(id)).set(auth).expect(200);
    expect(res.body).toEqual(triggerAnswer(`schedule ${id}`).body);
    expect(res.headers["x-svc-job-id"]!).toMatch(/^job_[0-9a-f]{24}$/);
    expect(res.headers["cache-control"]).toBe("no-store");
    expect(res.headers["x-svc-job-status"]).toBeUndefined();
    expect(res.headers["preference-applied"]).toBeUndefined();
    // The trigger counts against the export limit (5 per minute per key, issue 14).
    expect(res.headers["x-ratelimit-limit"]).toBe("5");
    expect(await charges(accountId)).toEqual([
      { reference: res.headers["x-svc-job-id"]!, amount_tenths: -10 },
    ]);
  });

  it("answers 202 with the job; any key of the account polls it, another account gets 404", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const second = await buildKey(t.ctx.db, accountId);
    const other = await buildAccount(t.ctx.db);
    const id = newSchedule();
    const started = Date.now();
    const res = await t.request().post(trigger(id)).set(auth).set("Prefer", "respond-async").expect(202);
    expect(Date.now() - started).toBeLessThan(2_000);
    const jobId = res.body.jobId as string;
    expect(res.body).toMatchObject({
      status: "running",
      kind: "test_trigger",
      statusUrl: `/api/v1/jobs/${jobId}`,
      retryAfterSeconds: 5,
      progress: { done: expect.any(Number), total: expect.any(Number), label: expect.any(String) },
    });
    expect(res.body.elapsedMs).toBeGreaterThanOrEqual(0);
    expect(res.headers).toMatchObject({
      location: `/api/v1/jobs/${jobId}`,
      "retry-after": "5",
      "x-svc-job-id": jobId,
      "x-svc-job-status": "running",
      "preference-applied": "respond-async",
      "cache-control": "no-store",
    });

    // The poll shows the progress the job reported.
    await expect
      .poll(async () => (await t.request().get(pollUrl(jobId)).set(second.auth).expect(202)).body.phase)
      .toBe("waiting");
    const running = await t.request().get(pollUrl(jobId)).set(second.auth).expect(202);
    expect(running.body.progress).toEqual({ done: 1, total: 3, label: "steps" });
    expect(running.headers["x-svc-job-status"]).toBe("running");

    const foreign = await t.request().get(pollUrl(jobId)).set(other.auth).expect(404);
    expect(foreign.body.error).toBe("job_not_found");
    await t.request().get(pollUrl(jobId)).expect(401);
    await t.request().get(pollUrl("job_unknown")).set(auth).expect(404);

    gates.release(`s${id}`);
    const done = await t.request().get(pollUrl(jobId)).set(second.auth).set("Prefer", "wait=10").expect(200);
    expect(done.body).toEqual(triggerAnswer(`schedule ${id}`).body);
    expect(done.headers).toMatchObject({
      "x-svc-job-id": jobId,
      "x-svc-job-status": "completed",
      "cache-control": "no-store",
      "preference-applied": "wait=10",
    });
    // Polling again gives exactly the same answer, and nothing ran or was charged twice.
    const again = await t.request().get(pollUrl(jobId)).set(auth).expect(200);
    expect(again.body).toEqual(done.body);
    expect(runs.get(`s${id}`)).toBe(1);
    expect(await charges(accountId)).toHaveLength(1);
    const foreignDone = await t.request().get(pollUrl(jobId)).set(other.auth).expect(404);
    expect(foreignDone.body.error).toBe("job_not_found");
  });

  it("needs a key and a paid plan", async () => {
    await t.request().post(trigger(newSchedule())).expect(401);
    const canceled = await buildAccount(t.ctx.db, { status: "canceled" });
    await t.request().post(trigger(newSchedule())).set(canceled.auth).expect(403);
    await t.request().get(pollUrl("job_x")).set(canceled.auth).expect(403);
    expect(
      await t.ctx.db.selectFrom("jobs").select("id").where("account_id", "=", canceled.accountId).execute(),
    ).toEqual([]);
  });
});

describe("Prefer", () => {
  it("wait=N waits N seconds from arrival, then answers 202", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const started = Date.now();
    const res = await t.request().post(trigger(newSchedule())).set(auth).set("Prefer", "wait=1").expect(202);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(3_000);
    expect(res.headers["preference-applied"]).toBe("wait=1");
  });

  it("answers as soon as the job finishes within the wait", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const id = newSchedule();
    setTimeout(() => gates.release(`s${id}`), 300);
    const started = Date.now();
    const res = await t.request().post(trigger(id)).set(auth).set("Prefer", "wait=20").expect(200);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(res.headers["preference-applied"]).toBe("wait=20");
    expect(res.headers["x-svc-job-status"]).toBeUndefined();
  });

  it("ignores invalid values and unknown preferences; respond-async with wait waits", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .post(trigger(newSchedule()))
      .set(auth)
      .set("Prefer", "wait=76, handling=strict, RESPOND-ASYNC")
      .expect(202);
    expect(res.headers["preference-applied"]).toBe("respond-async");

    const started = Date.now();
    const both = await t
      .request()
      .post(trigger(newSchedule()))
      .set(auth)
      .set("Prefer", "respond-async, wait=1")
      .expect(202);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(both.headers["preference-applied"]).toBe("respond-async, wait=1");
  });

  it("a poll waits up to wait=N (at most 60) for the job to finish", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const id = newSchedule();
    const res = await t.request().post(trigger(id)).set(auth).set("Prefer", "respond-async").expect(202);
    const started = Date.now();
    const waited = await t
      .request()
      .get(pollUrl(res.body.jobId))
      .set(auth)
      .set("Prefer", "wait=1")
      .expect(202);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(waited.headers["preference-applied"]).toBe("wait=1");
    const invalid = await t
      .request()
      .get(pollUrl(res.body.jobId))
      .set(auth)
      .set("Prefer", "wait=61")
      .expect(202);
    expect(invalid.headers["preference-applied"]).toBeUndefined();
    setTimeout(() => gates.release(`s${id}`), 300);
    const done = await t
      .request()
      .get(pollUrl(res.body.jobId))
      .set(auth)
      .set("Prefer", "wait=30")
      .expect(200);
    expect(done.headers["x-svc-job-status"]).toBe("completed");
  });
});

describe("Idempotency-Key", () => {
  it("a repeated request never runs again: the running job, then the stored answer", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const id = newSchedule();
    const key = "trigger-key-0001";
    const first = await t
      .request()
      .post(trigger(id))
      .set(auth)
      .set("Idempotency-Key", key)
      .set("Prefer", "respond-async")
      .expect(202);
    const second = await t
      .request()
      .post(trigger(id))
      .set(auth)
      .set("Idempotency-Key", key)
      .set("Prefer", "respond-async")
      .expect(202);
    expect(second.body.jobId).toBe(first.body.jobId);

    gates.release(`s${id}`);
    const replay = await t.request().post(trigger(id)).set(auth).set("Idempotency-Key", key).expect(200);
    expect(replay.headers["x-svc-job-id"]).toBe(first.body.jobId);
    expect(replay.body).toEqual(triggerAnswer(`schedule ${id}`).body);
    const later = await t.request().post(trigger(id)).set(auth).set("Idempotency-Key", key).expect(200);
    expect(later.headers["x-svc-job-status"]).toBe("completed");
    expect(later.body).toEqual(replay.body);

    expect(runs.get(`s${id}`)).toBe(1);
    expect(await charges(accountId)).toEqual([{ reference: first.body.jobId, amount_tenths: -10 }]);
    // Another key of the same account is the same account: still the stored answer.
    const otherKey = await buildKey(t.ctx.db, accountId);
    const fromOtherKey = await t
      .request()
      .post(trigger(id))
      .set(otherKey.auth)
      .set("Idempotency-Key", key)
      .expect(200);
    expect(fromOtherKey.headers["x-svc-job-id"]).toBe(first.body.jobId);
  });

  it("the same key with a different request gives 409 idempotency_key_reused", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const id = newSchedule();
    gates.release(`s${id}`);
    await t.request().post(trigger(id)).set(auth).set("Idempotency-Key", "reused-key-01").expect(200);
    const res = await t
      .request()
      .post(trigger(newSchedule()))
      .set(auth)
      .set("Idempotency-Key", "reused-key-01")
      .expect(409);
    expect(res.body.error).toBe("idempotency_key_reused");
    const exp = await exportWithKey(auth, "export-key-01", { maxLeads: 2 }).expect(200);
    const changed = await exportWithKey(auth, "export-key-01", { maxLeads: 3 }).expect(409);
    expect(changed.body.error).toBe("idempotency_key_reused");
    // Key order and white space of the body do not make a different request.
    const same = await t
      .request()
      .post("/api/v1/leads/export")
      .set(auth)
      .set("Idempotency-Key", "export-key-01")
      .set("Content-Type", "application/json")
      .send('{ "maxLeads": 2,  "positiveKeywords": ["plumber"] }')
      .expect(200);
    expect(same.headers["x-svc-job-id"]).toBe(exp.headers["x-svc-job-id"]);
  });

  it("keys are separate per endpoint and per account", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const id = newSchedule();
    gates.release(`s${id}`);
    const key = "shared-key-001";
    const a = await t.request().post(trigger(id)).set(auth).set("Idempotency-Key", key).expect(200);
    const b = await t
      .request()
      .post("/api/v1/ai/suggest-categories")
      .set(auth)
      .set("Idempotency-Key", key)
      .send({ companyName: "Acme", companyDescription: "Pipes", productService: "Plumbing" })
      .expect(200);
    expect(b.body.data.categories[0]).toBe("Acme suppliers");
    expect(b.headers["x-svc-job-id"]).not.toBe(a.headers["x-svc-job-id"]);
    const c = await t.request().post(trigger(id)).set(other.auth).set("Idempotency-Key", key).expect(200);
    expect(c.headers["x-svc-job-id"]).not.toBe(a.headers["x-svc-job-id"]);
  });

  it("an invalid key is refused with 400 and nothing is queued", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .post(trigger(newSchedule()))
      .set(auth)
      .set("Idempotency-Key", "short")
      .expect(400);
    expect(res.body.error).toBe("validation_error");
    expect(
      await t.ctx.db.selectFrom("jobs").select("id").where("account_id", "=", accountId).execute(),
    ).toEqual([]);
  });

  it("an export's 402 does not use the key up; the stored error is polled like any answer", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const key = "export-402-key";
    const failed = await exportWithKey(auth, key, { maxLeads: 402 }).expect(402);
    expect(failed.body.error).toBe("insufficient_credits");
    expect(failed.headers["x-svc-job-id"]!).toBeDefined();
    const polled = await t.request().get(pollUrl(failed.headers["x-svc-job-id"]!)).set(auth).expect(402);
    expect(polled.body).toEqual(failed.body);
    expect(polled.headers["x-svc-job-status"]).toBe("failed");
    // The same key with another request runs it (no 409): the 402 did not use the key up.
    const ok = await exportWithKey(auth, key, { maxLeads: 2 }).expect(200);
    expect(ok.headers["x-svc-job-id"]!).not.toBe(failed.headers["x-svc-job-id"]!);
    expect(ok.headers["content-type"]).toMatch(/^text\/csv/);
    expect(ok.headers["content-disposition"]).toContain('filename="leads-main-2026-11-22.csv"');
    expect(ok.text).toBe("companyName,website\nlead 1,example1.com\nlead 2,example2.com\n");
    const file = await t.request().get(pollUrl(ok.headers["x-svc-job-id"]!)).set(auth).expect(200);
    expect(file.text).toBe(ok.text);
    expect(file.headers["content-disposition"]).toBe(ok.headers["content-disposition"]);
    expect(file.headers["x-svc-job-status"]).toBe("completed");
  });

  it("a failed job's other errors use the key up: the same key returns the stored 500", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .post(trigger(900_001))
      .set(auth)
      .set("Idempotency-Key", "timeout-key-1")
      .expect(500);
    expect(res.body.error).toBe("job_timeout");
    const again = await t
      .request()
      .post(trigger(900_001))
      .set(auth)
      .set("Idempotency-Key", "timeout-key-1")
      .expect(500);
    expect(again.headers["x-svc-job-id"]).toBe(res.headers["x-svc-job-id"]!);
    expect(again.headers["x-svc-job-status"]).toBe("failed");
  });

  it("without a key an identical request joins the running job, and runs again once it finished", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const id = newSchedule();
    const first = await t.request().post(trigger(id)).set(auth).set("Prefer", "respond-async").expect(202);
    const second = await t.request().post(trigger(id)).set(auth).set("Prefer", "respond-async").expect(202);
    expect(second.body.jobId).toBe(first.body.jobId);
    const different = await t
      .request()
      .post(trigger(newSchedule()))
      .set(auth)
      .set("Prefer", "respond-async")
      .expect(202);
    expect(different.body.jobId).not.toBe(first.body.jobId);
    gates.release(`s${id}`);
    await t.request().get(pollUrl(first.body.jobId)).set(auth).set("Prefer", "wait=10").expect(200);
    const third = await t.request().post(trigger(id)).set(auth).expect(200);
    expect(third.headers["x-svc-job-id"]).not.toBe(first.body.jobId);
    expect(runs.get(`s${id}`)).toBe(2);
  });
});

describe("capacity", () => {
  it("a 4th running export gives 429 job_capacity_busy, which does not use the key up", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const gate = `gate-cap-${accountId}`;
    const started = await Promise.all(
      [1, 2, 3].map((n) =>
        t
          .request()
          .post("/api/v1/leads/export")
          .set(auth)
          .set("Prefer", "respond-async")
          .send(exportBody({ maxLeads: n, positiveKeywords: ["plumber", gate] }))
          .expect(202),
      ),
    );
    expect(new Set(started.map((r) => r.body.jobId)).size).toBe(3);
    const busy = await exportWithKey(auth, "capacity-key", { maxLeads: 4 }).expect(429);
    expect(busy.body.error).toBe("job_capacity_busy");
    expect(busy.headers["retry-after"]).toBe("30");
    // Other kinds have their own capacity (another key of the account: the trigger counts
    // against the export limit of its key).
    const id = newSchedule();
    gates.release(`s${id}`);
    await t
      .request()
      .post(trigger(id))
      .set((await buildKey(t.ctx.db, accountId)).auth)
      .expect(200);

    gates.release(gate);
    for (const r of started)
      await t.request().get(pollUrl(r.body.jobId)).set(auth).set("Prefer", "wait=10").expect(200);
    const ok = await exportWithKey(auth, "capacity-key", { maxLeads: 4 }).expect(200);
    expect(ok.text.trim().split("\n")).toHaveLength(5);
  });

  it("is enforced atomically under concurrent requests", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const gate = `s-concurrent-${accountId}`;
    const ids = Array.from({ length: 8 }, () => newSchedule());
    const answers = await Promise.all(
      ids.map((id) => t.request().post(trigger(id)).set(auth).set("Prefer", "respond-async")),
    );
    expect(answers.filter((r) => r.status === 202)).toHaveLength(5);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(3);
    for (const id of ids) gates.release(`s${id}`);
    void gate;
  });
});

describe("time limit", () => {
  it("a job past its time limit answers 500 job_timeout, also on polls", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t.request().post(trigger(900_002)).set(auth).expect(500);
    expect(res.body).toEqual({ error: "job_timeout", message: expect.any(String) });
    expect(res.headers["x-svc-job-id"]!).toBeDefined();
    const polled = await t.request().get(pollUrl(res.headers["x-svc-job-id"]!)).set(auth).expect(500);
    expect(polled.body.error).toBe("job_timeout");
    expect(polled.headers["x-svc-job-status"]).toBe("failed");
  });

  it("a running job whose worker is gone is answered job_timeout once past its deadline", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .post(trigger(newSchedule()))
      .set(auth)
      .set("Prefer", "respond-async")
      .expect(202);
    await t.ctx.db
      .updateTable("jobs")
      .set({ deadline_at: new Date(Date.now() - 60_000) })
      .where("id", "=", res.body.jobId)
      .execute();
    const polled = await t.request().get(pollUrl(res.body.jobId)).set(auth).expect(500);
    expect(polled.body.error).toBe("job_timeout");
  });

  it("the sweep answers job_timeout for a running job long past its deadline", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .post(trigger(newSchedule()))
      .set(auth)
      .set("Prefer", "respond-async")
      .expect(202);
    // The worker has taken the job (its own timer is 60 s away), then the deadline passes.
    await expect
      .poll(async () => (await t.request().get(pollUrl(res.body.jobId)).set(auth).expect(202)).body.phase)
      .toBe("waiting");
    await t.ctx.db
      .updateTable("jobs")
      .set({ deadline_at: new Date(Date.now() - 60_000) })
      .where("id", "=", res.body.jobId)
      .execute();
    const swept = await sweepJobs({ db: t.ctx.db, storage: t.ctx.storage, logger: t.ctx.logger });
    expect(swept.timedOut).toBeGreaterThanOrEqual(1);
    const row = await t.ctx.db
      .selectFrom("jobs")
      .select(["status", "answer"])
      .where("id", "=", res.body.jobId)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe("failed");
    expect(row.answer).toMatchObject({ status: 500, body: { error: "job_timeout" } });
  });
});

describe("expiry", () => {
  it("after retention a poll answers 410 job_result_expired for about a day, then 404", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const res = await exportWithKey(auth, "expiry-key-01", { maxLeads: 1 }).expect(200);
    const jobId = res.headers["x-svc-job-id"]! as string;
    const stored = await t.ctx.db
      .selectFrom("jobs")
      .select(["result_expires_at", "finished_at", "key_expires_at"])
      .where("id", "=", jobId)
      .executeTakeFirstOrThrow();
    expect(stored.result_expires_at!.getTime() - stored.finished_at!.getTime()).toBe(60 * 60_000);
    expect(stored.key_expires_at!.getTime() - stored.finished_at!.getTime()).toBe(25 * 60 * 60_000);
    const storageKey = `jobs/${jobId}/leads.csv`;
    expect(await t.ctx.storage.size(storageKey)).toBeGreaterThan(0);

    await t.ctx.db
      .updateTable("jobs")
      .set({ result_expires_at: new Date(Date.now() - 1000) })
      .where("id", "=", jobId)
      .execute();
    const expired = await t.request().get(pollUrl(jobId)).set(auth).expect(410);
    expect(expired.body.error).toBe("job_result_expired");
    expect(expired.headers["x-svc-job-status"]).toBe("expired");
    // The key still holds: the request is not run again.
    const replay = await exportWithKey(auth, "expiry-key-01", { maxLeads: 1 }).expect(410);
    expect(replay.body.error).toBe("job_result_expired");

    // The sweep deletes the answer's file.
    await sweepJobs({ db: t.ctx.db, storage: t.ctx.storage, logger: t.ctx.logger });
    expect(await t.ctx.storage.size(storageKey)).toBeUndefined();
    await t.request().get(pollUrl(jobId)).set(auth).expect(410);

    // About a day later: 404; the key still answers 410 until it lapses, then the job is forgotten.
    await t.ctx.db
      .updateTable("jobs")
      .set({ expired_at: new Date(Date.now() - 25 * 3_600_000) })
      .where("id", "=", jobId)
      .execute();
    const gone = await t.request().get(pollUrl(jobId)).set(auth).expect(404);
    expect(gone.body.error).toBe("job_not_found");
    await exportWithKey(auth, "expiry-key-01", { maxLeads: 1 }).expect(410);
    await t.ctx.db
      .updateTable("jobs")
      .set({ key_expires_at: new Date(Date.now() - 1000) })
      .where("id", "=", jobId)
      .execute();
    await sweepJobs({ db: t.ctx.db, storage: t.ctx.storage, logger: t.ctx.logger });
    expect(await t.ctx.db.selectFrom("jobs").select("id").where("id", "=", jobId).execute()).toEqual([]);
    // Once the key has lapsed, the same key runs the request again.
    const rerun = await exportWithKey(auth, "expiry-key-01", { maxLeads: 1 }).expect(200);
    expect(rerun.headers["x-svc-job-id"]).not.toBe(jobId);
    void accountId;
  });

  it("a schedule trigger's answer is kept 24 hours and its key 48 hours", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const id = newSchedule();
    gates.release(`s${id}`);
    const res = await t
      .request()
      .post(trigger(id))
      .set(auth)
      .set("Idempotency-Key", "trigger-ttl-1")
      .expect(200);
    const stored = await t.ctx.db
      .selectFrom("jobs")
      .select(["result_expires_at", "finished_at", "key_expires_at"])
      .where("id", "=", res.headers["x-svc-job-id"]!)
      .executeTakeFirstOrThrow();
    expect(stored.result_expires_at!.getTime() - stored.finished_at!.getTime()).toBe(24 * 3_600_000);
    expect(stored.key_expires_at!.getTime() - stored.finished_at!.getTime()).toBe(48 * 3_600_000);
  });

  it("keeps at most 500 finished answers per account, expiring the oldest first", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const base = Date.now() - 30 * 60_000;
    const answer = JSON.stringify({ status: 200, headers: {}, body: triggerAnswer("old").body });
    await t.ctx.db
      .insertInto("jobs")
      .values(
        Array.from({ length: 500 }, (_, i) => ({
          id: `job_old_${accountId}_${String(i).padStart(3, "0")}`,
          account_id: accountId,
          kind: "test_trigger",
          endpoint: "POST /api/v1/email-schedules/{id}/trigger",
          request_hash: `old-${i}`,
          input: "{}",
          status: "completed" as const,
          phase: "finished",
          answer,
          created_at: new Date(base + i * 1000),
          deadline_at: new Date(base + i * 1000 + 60_000),
          finished_at: new Date(base + i * 1000),
          result_expires_at: new Date(Date.now() + 3_600_000),
          key_expires_at: new Date(Date.now() + 3_600_000),
        })),
      )
      .execute();
    const oldest = `job_old_${accountId}_000`;
    await t.request().get(pollUrl(oldest)).set(auth).expect(200);
    const id = newSchedule();
    gates.release(`s${id}`);
    await t.request().post(trigger(id)).set(auth).expect(200);
    const expired = await t.request().get(pollUrl(oldest)).set(auth).expect(410);
    expect(expired.body.error).toBe("job_result_expired");
    await t
      .request()
      .get(pollUrl(`job_old_${accountId}_001`))
      .set(auth)
      .expect(200);
    const kept = await t.ctx.db
      .selectFrom("jobs")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("account_id", "=", accountId)
      .where("status", "in", ["completed", "failed"])
      .executeTakeFirstOrThrow();
    expect(Number(kept.n)).toBe(500);
  });
});

describe("job kinds", () => {
  it("answer only the operation they are bound to", async () => {
    const call = {
      operation: { operationId: "suggestCategories", method: "POST", path: "/api/v1/ai/suggest-categories" },
      query: {},
      body: {},
      http: {
        method: "POST",
        path: "/api/v1/ai/suggest-categories",
        rawHeaders: {},
        arrivedAt: Date.now(),
        signal: new AbortController().signal,
      },
    };
    await expect(
      runLongRunning(call, t.ctx, { kind: exportJob, accountId: 1, input: { maxLeads: 1, gate: null } }),
    ).rejects.toThrow(/test_export answers exportLeads, not suggestCategories/);
  });
});
