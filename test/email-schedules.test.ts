import { describe, expect, it } from "vitest";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { expectKeyAndPlanRequired } from "./helpers/lead-records-factories.js";

const t = useTestApp();

type Auth = { Authorization: string };

async function createPreset(auth: Auth, positiveKeywords = ["plumb"]): Promise<number> {
  const res = await t
    .request()
    .post("/api/v1/filter-presets")
    .set(auth)
    .send({ name: "preset", filters: { positiveKeywords } })
    .expect(201);
  return res.body.data.id as number;
}

async function createFormat(auth: Auth): Promise<number> {
  const res = await t
    .request()
    .post("/api/v1/export-formats")
    .set(auth)
    .send({
      name: "Mine",
      fileType: "csv",
      fieldMappings: [{ sourceField: "companyName", exportName: "Company", type: "field" }],
    })
    .expect(201);
  return res.body.data.id as number;
}

async function create(auth: Auth, body: Record<string, unknown>) {
  return t.request().post("/api/v1/email-schedules").set(auth).send(body);
}

describe("POST /email-schedules", () => {
  it("creates a schedule with the defaults: the account's address, full copy, daily", async () => {
    const account = await buildAccount(t.ctx.db, { email: `owner-${Date.now()}@example.com` });
    const presetId = await createPreset(account.auth);
    const before = Date.now();
    const res = await create(account.auth, {
      name: "Daily plumbers",
      filterPresetId: presetId,
      intervalValue: 1,
    });
    expect(res.status).toBe(201);
    const schedule = res.body.data;
    expect(schedule).toMatchObject({
      id: expect.any(Number),
      name: "Daily plumbers",
      filterPresetId: presetId,
      exportFormatId: null,
      intervalValue: 1,
      intervalUnit: "days",
      isActive: true,
      pauseReason: null,
      distributionMode: "full_copy",
      fullCopyRecipients: [],
      maxLeadsPerEmail: null,
      combinedFileEnabled: false,
      combinedRecipients: [],
      combinedColumnsPosition: "end",
      lastSent: null,
      lastSentAt: null,
      totalSentCount: 0,
    });
    const owner = await t.ctx.db
      .selectFrom("accounts")
      .select("email")
      .where("id", "=", account.accountId)
      .executeTakeFirstOrThrow();
    expect(schedule.recipients).toEqual([{ email: owner.email }]);
    const next = Date.parse(schedule.nextRunAt as string);
    expect(next).toBeGreaterThanOrEqual(before + 24 * 3600_000 - 1000);
    expect(next).toBeLessThanOrEqual(Date.now() + 24 * 3600_000 + 1000);

    const list = await t.request().get("/api/v1/email-schedules").set(account.auth).expect(200);
    expect(list.body.data).toEqual([schedule]);
  });

  it("keeps every given field; deduplicates addresses (first spelling kept)", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const presetId = await createPreset(auth);
    const formatId = await createFormat(auth);
    const res = await create(auth, {
      name: "Split",
      filterPresetId: presetId,
      exportFormatId: formatId,
      intervalValue: 6,
      intervalUnit: "hours",
      isActive: false,
      recipients: [
        { email: "Ann@example.com", splitParts: 2 },
        { email: "bob@example.com" },
        { email: "ann@example.com", splitParts: 5 },
      ],
      distributionMode: "split_evenly",
      fullCopyRecipients: ["boss@example.com", "BOSS@example.com"],
      maxLeadsPerEmail: 500,
      combinedFileEnabled: true,
      combinedRecipients: ["ops@example.com"],
      combinedColumnsPosition: "beginning",
      pauseReason: "insufficient_credits",
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      exportFormatId: formatId,
      intervalValue: 6,
      intervalUnit: "hours",
      isActive: false,
      pauseReason: "user",
      nextRunAt: null,
      recipients: [{ email: "Ann@example.com", splitParts: 2 }, { email: "bob@example.com" }],
      distributionMode: "split_evenly",
      fullCopyRecipients: ["boss@example.com"],
      maxLeadsPerEmail: 500,
      combinedFileEnabled: true,
      combinedRecipients: ["ops@example.com"],
      combinedColumnsPosition: "beginning",
    });
  });

  it("refuses bad input with 400 and stores nothing", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const presetId = await createPreset(auth);
    const base = { name: "x", filterPresetId: presetId, intervalValue: 1 };
    const bad: [Record<string, unknown>, string][] = [
      [{ filterPresetId: presetId, intervalValue: 1 }, "validation_error"],
      [{ name: "x", intervalValue: 1 }, "validation_error"],
      [{ name: "x", filterPresetId: presetId }, "validation_error"],
      [{ ...base, intervalValue: 0 }, "validation_error"],
      [{ ...base, intervalValue: 721 }, "validation_error"],
      [{ ...base, intervalValue: 1.5 }, "validation_error"],
      [{ ...base, intervalUnit: "weeks" }, "validation_error"],
      [{ ...base, name: "" }, "validation_error"],
      [{ ...base, recipients: [] }, "validation_error"],
      [{ ...base, recipients: [{ email: "not-an-address" }] }, "validation_error"],
      [
        { ...base, recipients: Array.from({ length: 51 }, (_, i) => ({ email: `r${i}@example.com` })) },
        "validation_error",
      ],
      [{ ...base, recipients: [{ email: "a@example.com", splitParts: 0 }] }, "validation_error"],
      [{ ...base, distributionMode: "split" }, "validation_error"],
      [{ ...base, maxLeadsPerEmail: 0 }, "validation_error"],
      [{ ...base, maxLeadsPerEmail: 100_001 }, "validation_error"],
      [{ ...base, combinedColumnsPosition: "middle" }, "validation_error"],
      [
        { ...base, combinedRecipients: Array.from({ length: 51 }, (_, i) => `c${i}@example.com`) },
        "validation_error",
      ],
      // Full-copy recipients need split_evenly among at least 2 recipients.
      [{ ...base, fullCopyRecipients: ["boss@example.com"] }, "validation_error"],
      [
        {
          ...base,
          distributionMode: "split_evenly",
          recipients: [{ email: "a@example.com" }],
          fullCopyRecipients: ["boss@example.com"],
        },
        "validation_error",
      ],
      [
        {
          ...base,
          distributionMode: "split_evenly",
          recipients: [{ email: "a@example.com" }, { email: "b@example.com" }],
          fullCopyRecipients: ["A@example.com"],
        },
        "validation_error",
      ],
      [{ ...base, combinedFileEnabled: true }, "validation_error"],
      [{ ...base, filterPresetId: presetId + 100_000 }, "validation_error"],
      [{ ...base, exportFormatId: 999_999 }, "validation_error"],
    ];
    for (const [body, code] of bad) {
      const res = await create(auth, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toBe(code);
    }
    const list = await t.request().get("/api/v1/email-schedules").set(auth).expect(200);
    expect(list.body.data).toEqual([]);
  });

  it("a preset or format of another account is a 400, never a leak", async () => {
    const mine = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const myPreset = await createPreset(mine.auth);
    const theirPreset = await createPreset(other.auth);
    const theirFormat = await createFormat(other.auth);
    const res = await create(mine.auth, { name: "x", filterPresetId: theirPreset, intervalValue: 1 });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error: "validation_error",
      details: [{ path: ["body", "filterPresetId"] }],
    });
    const res2 = await create(mine.auth, {
      name: "x",
      filterPresetId: myPreset,
      exportFormatId: theirFormat,
      intervalValue: 1,
    });
    expect(res2.status).toBe(400);
    expect(res2.body).toMatchObject({
      error: "validation_error",
      details: [{ path: ["body", "exportFormatId"] }],
    });
  });
});

describe("PATCH /email-schedules/{id}", () => {
  it("changes only the fields sent; false pauses (user), true resumes one interval later", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const presetId = await createPreset(auth);
    const created = (await create(auth, { name: "a", filterPresetId: presetId, intervalValue: 2 })).body.data;
    const paused = await t
      .request()
      .patch(`/api/v1/email-schedules/${created.id}`)
      .set(auth)
      .send({ isActive: false, name: "b", other: 1 })
      .expect(200);
    expect(paused.body.data).toMatchObject({
      ...created,
      name: "b",
      isActive: false,
      pauseReason: "user",
      nextRunAt: null,
      updatedAt: expect.any(String),
    });
    const before = Date.now();
    const resumed = await t
      .request()
      .patch(`/api/v1/email-schedules/${created.id}`)
      .set(auth)
      .send({ isActive: true, intervalUnit: "hours" })
      .expect(200);
    expect(resumed.body.data).toMatchObject({ isActive: true, pauseReason: null, intervalUnit: "hours" });
    const next = Date.parse(resumed.body.data.nextRunAt as string);
    expect(next).toBeGreaterThanOrEqual(before + 2 * 3600_000 - 1000);
    expect(next).toBeLessThanOrEqual(Date.now() + 2 * 3600_000 + 1000);
  });

  it("checks the rules on the result; 400 bad_request without a writable field; 404 for another account's", async () => {
    const mine = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const presetId = await createPreset(mine.auth);
    const theirPreset = await createPreset(other.auth);
    const created = (
      await create(mine.auth, {
        name: "a",
        filterPresetId: presetId,
        intervalValue: 1,
        distributionMode: "split_evenly",
        recipients: [{ email: "a@example.com" }, { email: "b@example.com" }],
        fullCopyRecipients: ["boss@example.com"],
      })
    ).body.data;
    const path = `/api/v1/email-schedules/${created.id}`;
    const toFullCopy = await t.request().patch(path).set(mine.auth).send({ distributionMode: "full_copy" });
    expect(toFullCopy.status).toBe(400);
    expect(toFullCopy.body.error).toBe("validation_error");
    const none = await t.request().patch(path).set(mine.auth).send({ nothing: true });
    expect(none.status).toBe(400);
    expect(none.body.error).toBe("bad_request");
    const foreignPreset = await t.request().patch(path).set(mine.auth).send({ filterPresetId: theirPreset });
    expect(foreignPreset.status).toBe(400);
    expect(foreignPreset.body.error).toBe("validation_error");
    const bad = await t.request().patch(path).set(mine.auth).send({ intervalValue: 0 });
    expect(bad.status).toBe(400);
    const notMine = await t.request().patch(path).set(other.auth).send({ name: "stolen" });
    expect(notMine.status).toBe(404);
    expect(notMine.body.error).toBe("not_found");
    const missing = await t
      .request()
      .patch("/api/v1/email-schedules/999999")
      .set(mine.auth)
      .send({ name: "x" });
    expect(missing.status).toBe(404);

    const list = await t.request().get("/api/v1/email-schedules").set(mine.auth).expect(200);
    expect(list.body.data).toEqual([created]);
    const theirs = await t.request().get("/api/v1/email-schedules").set(other.auth).expect(200);
    expect(theirs.body.data).toEqual([]);
  });
});

describe("DELETE /email-schedules/{id}", () => {
  it("deletes the account's schedule; 404 for another account's or a missing one", async () => {
    const mine = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const presetId = await createPreset(mine.auth);
    const created = (await create(mine.auth, { name: "a", filterPresetId: presetId, intervalValue: 1 })).body
      .data;
    const path = `/api/v1/email-schedules/${created.id}`;
    const notMine = await t.request().delete(path).set(other.auth);
    expect(notMine.status).toBe(404);
    await t.request().delete(path).set(mine.auth).expect(200);
    const again = await t.request().delete(path).set(mine.auth);
    expect(again.status).toBe(404);
    expect(again.body.error).toBe("not_found");
    const list = await t.request().get("/api/v1/email-schedules").set(mine.auth).expect(200);
    expect(list.body.data).toEqual([]);
  });
});

describe("keys and plans", () => {
  it("every operation needs a valid key of an account with a paid subscription", async () => {
    await expectKeyAndPlanRequired(t, [
      { method: "get", path: "/api/v1/email-schedules" },
      {
        method: "post",
        path: "/api/v1/email-schedules",
        body: { name: "x", filterPresetId: 1, intervalValue: 1 },
      },
      { method: "delete", path: "/api/v1/email-schedules/1" },
      { method: "post", path: "/api/v1/email-schedules/1/trigger" },
    ]);
    // PATCH (the helper's calls have no PATCH): no key, a wrong key, no paid plan.
    const canceled = await buildAccount(t.ctx.db, { status: "canceled" });
    const patch = () => t.request().patch("/api/v1/email-schedules/1").send({ name: "x" });
    expect((await patch()).status).toBe(401);
    expect((await patch().set({ Authorization: `Bearer svck_${"x".repeat(40)}` })).status).toBe(401);
    const forbidden = await patch().set(canceled.auth);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toBe("forbidden");
  });
});

describe("POST /settings/switch-database", () => {
  it("pauses the schedules made for the other database and counts them", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const presetId = await createPreset(auth);
    await create(auth, { name: "a", filterPresetId: presetId, intervalValue: 1 });
    await create(auth, { name: "b", filterPresetId: presetId, intervalValue: 1 });
    await create(auth, { name: "paused", filterPresetId: presetId, intervalValue: 1, isActive: false });
    const res = await t
      .request()
      .post("/api/v1/settings/switch-database")
      .set(auth)
      .send({ smbType: "home_improvement" })
      .expect(200);
    expect(res.body.data.pausedSchedules).toBe(2);
    const list = await t.request().get("/api/v1/email-schedules").set(auth).expect(200);
    expect(list.body.data.map((s: { isActive: boolean }) => s.isActive)).toEqual([false, false, false]);
    expect(list.body.data.map((s: { nextRunAt: string | null }) => s.nextRunAt)).toEqual([null, null, null]);
  });
});
