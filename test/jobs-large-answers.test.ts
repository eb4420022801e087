import type { Runner } from "graphile-worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app/create-app.js";
import type { AppContext } from "../src/app/context.js";
import type { OperationHandlers } from "../src/http/contract.js";
import { defineJobKind, runLongRunning, type JobAnswerOf } from "../src/jobs/index.js";
import { bodyFileKey, LARGE_BODY_BYTES } from "../src/jobs/large-bodies.js";
import { claimRun } from "../src/jobs/repository.js";
import { storeFinalAnswer } from "../src/jobs/service.js";
import { sweepJobs } from "../src/jobs/tasks/jobs__sweep.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { startJobRunner } from "./helpers/jobs-factories.js";

const t = useTestApp();

/** 12 categories of `size` characters each: large enough, or not, to be kept in storage. */
function answerOf(companyName: string, size: number): JobAnswerOf<"suggestCategories"> {
  const categories = Array.from({ length: 12 }, (_, i) => `${companyName} ${i} ${"é".repeat(size)}`);
  return { status: 200, body: { data: { categories, websiteAnalysisFailed: false } } };
}

/** `companyName` "big ..." answers about 12 x 30,000 characters (over LARGE_BODY_BYTES), any other a few. */
const sizeOf = (companyName: string) => (companyName.startsWith("big") ? 30_000 : 10);

const suggestJob = defineJobKind<{ companyName: string }, "suggestCategories">({
  kind: "test_large_suggest",
  operation: "suggestCategories",
  capacity: 3,
  async run(input) {
    return answerOf(input.companyName, sizeOf(input.companyName));
  },
});

function testHandlers(ctx: AppContext): Partial<OperationHandlers> {
  return {
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
beforeAll(async () => {
  t.app = createApp(t.ctx, { handlers: testHandlers(t.ctx) });
  runner = await startJobRunner(t.ctx);
});
afterAll(async () => {
  await runner?.stop();
});

const suggest = (auth: Record<string, string>, companyName: string, key: string) =>
  t
    .request()
    .post("/api/v1/ai/suggest-categories")
    .set(auth)
    .set("Idempotency-Key", key)
    .send({ companyName, companyDescription: "Pipes", productService: "Plumbing" });

async function storedAnswerOf(jobId: string): Promise<Record<string, unknown>> {
  const row = await t.ctx.db
    .selectFrom("jobs")
    .select("answer")
    .where("id", "=", jobId)
    .executeTakeFirstOrThrow();
  return row.answer as Record<string, unknown>;
}

describe("large job answers", () => {
  it("are kept in storage and given back byte for byte as JSON, on the request, a poll and a replay", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const expected = answerOf("big one", sizeOf("big one")).body;
    expect(JSON.stringify(expected).length).toBeGreaterThan(LARGE_BODY_BYTES);

    const res = await suggest(auth, "big one", "large-answer-1").expect(200);
    expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(Number(res.headers["content-length"])).toBe(Buffer.byteLength(JSON.stringify(expected)));
    expect(res.headers["cache-control"]).toBe("no-store");
    expect(res.headers["content-disposition"]).toBeUndefined();
    expect(res.body).toEqual(expected);
    const jobId = res.headers["x-svc-job-id"] as string;

    // The jobs table holds only where the body is.
    const stored = await storedAnswerOf(jobId);
    expect(stored).toMatchObject({ status: 200, bodyFile: { storageKey: bodyFileKey(jobId, 1) } });
    expect(stored).not.toHaveProperty("body");
    expect(await t.ctx.storage.size(bodyFileKey(jobId, 1))).toBe(Buffer.byteLength(JSON.stringify(expected)));

    const poll = await t.request().get(`/api/v1/jobs/${jobId}`).set(auth).expect(200);
    expect(poll.body).toEqual(expected);
    expect(poll.headers["x-svc-job-status"]).toBe("completed");
    const replay = await suggest(auth, "big one", "large-answer-1").expect(200);
    expect(replay.headers["x-svc-job-id"]).toBe(jobId);
    expect(replay.body).toEqual(expected);
  });

  it("small answers stay in the jobs table", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await suggest(auth, "small one", "small-answer-1").expect(200);
    expect(res.body).toEqual(answerOf("small one", sizeOf("small one")).body);
    const stored = await storedAnswerOf(res.headers["x-svc-job-id"] as string);
    expect(stored).toMatchObject({ status: 200, body: res.body });
    expect(stored).not.toHaveProperty("bodyFile");
  });

  it("expire with their answer: the sweep deletes the file and a poll answers 410", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await suggest(auth, "big two", "large-answer-2").expect(200);
    const jobId = res.headers["x-svc-job-id"] as string;
    expect(await t.ctx.storage.size(bodyFileKey(jobId, 1))).toBeGreaterThan(0);
    await t.ctx.db
      .updateTable("jobs")
      .set({ result_expires_at: new Date(Date.now() - 1000) })
      .where("id", "=", jobId)
      .execute();
    const swept = await sweepJobs({ db: t.ctx.db, storage: t.ctx.storage, logger: t.ctx.logger });
    expect(swept.filesDeleted).toBeGreaterThanOrEqual(1);
    expect(await t.ctx.storage.size(bodyFileKey(jobId, 1))).toBeUndefined();
    const gone = await t.request().get(`/api/v1/jobs/${jobId}`).set(auth).expect(410);
    expect(gone.body.error).toBe("job_result_expired");
  });

  it("an attempt that can no longer answer leaves no file; a file gone from storage answers 410", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    await runner.stop();
    try {
      const accepted = await suggest(auth, "big three", "large-answer-3")
        .set("Prefer", "respond-async")
        .expect(202);
      const jobId = accepted.body.jobId as string;
      const first = await claimRun(t.ctx.db, jobId, "worker-1");
      const second = await claimRun(t.ctx.db, jobId, "worker-2");
      const answer = answerOf("big three", sizeOf("big three"));
      const commit = (attempt: number) =>
        t.ctx.db
          .transaction()
          .execute((trx) => storeFinalAnswer(trx, second!, answer, attempt, t.ctx.storage));
      expect(await commit(first!.attempts)).toBe(false);
      expect(await t.ctx.storage.size(bodyFileKey(jobId, first!.attempts))).toBeUndefined();
      expect(await commit(second!.attempts)).toBe(true);
      const done = await t.request().get(`/api/v1/jobs/${jobId}`).set(auth).expect(200);
      expect(done.body).toEqual(answer.body);

      await t.ctx.storage.delete(bodyFileKey(jobId, second!.attempts));
      const lost = await t.request().get(`/api/v1/jobs/${jobId}`).set(auth).expect(410);
      expect(lost.body.error).toBe("job_result_expired");
    } finally {
      runner = await startJobRunner(t.ctx);
    }
  });
});
