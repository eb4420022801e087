import { describe, expect, it } from "vitest";
import { SWITCH_COOLDOWN_DAYS } from "../src/settings/service.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";

const t = useTestApp();

async function addSchedule(accountId: number, name: string, isActive = true) {
  await t.ctx.db
    .insertInto("email_schedules")
    .values({ account_id: accountId, name, is_active: isActive })
    .execute();
}

describe("GET /settings/database", () => {
  it("reports the Main database, switchable, never switched", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t.request().get("/api/v1/settings/database").set(auth).expect(200);
    expect(res.body.data).toEqual({
      currentDatabase: "other",
      canSwitch: true,
      daysRemaining: 0,
      lastSwitchedAt: null,
    });
  });

  it("needs a key and a paid plan", async () => {
    await t.request().get("/api/v1/settings/database").expect(401);
    const { auth } = await buildAccount(t.ctx.db, { status: "canceled" });
    await t.request().get("/api/v1/settings/database").set(auth).expect(403);
  });
});

describe("POST /settings/switch-database", () => {
  it("switching to the database in use changes nothing", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    await addSchedule(accountId, "weekly");
    const res = await t
      .request()
      .post("/api/v1/settings/switch-database")
      .set(auth)
      .send({ smbType: "other" })
      .expect(200);
    expect(res.body.data).toMatchObject({
      currentDatabase: "other",
      pausedSchedules: 0,
      canSwitch: true,
      lastSwitchedAt: null,
    });
  });

  it("switches, pauses the schedules of the other database and starts the cooldown", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    await addSchedule(accountId, "a");
    await addSchedule(accountId, "b");
    await addSchedule(accountId, "already paused", false);
    await addSchedule(other.accountId, "someone else's");

    const res = await t
      .request()
      .post("/api/v1/settings/switch-database")
      .set(auth)
      .send({ smbType: "home_improvement" })
      .expect(200);
    expect(res.body.data).toMatchObject({
      currentDatabase: "home_improvement",
      pausedSchedules: 2,
      canSwitch: false,
      daysRemaining: SWITCH_COOLDOWN_DAYS,
    });
    expect(res.body.data.lastSwitchedAt).toEqual(expect.any(String));

    const paused = await t.ctx.db
      .selectFrom("email_schedules")
      .select(["account_id", "is_active", "pause_reason"])
      .orderBy("id")
      .execute();
    expect(paused.filter((s) => s.account_id === accountId).map((s) => s.is_active)).toEqual([
      false,
      false,
      false,
    ]);
    expect(paused.find((s) => s.account_id === other.accountId)).toMatchObject({
      is_active: true,
      pause_reason: null,
    });

    const again = await t
      .request()
      .post("/api/v1/settings/switch-database")
      .set(auth)
      .send({ smbType: "other" })
      .expect(409);
    expect(again.body.error).toBe("conflict");

    const settings = await t.request().get("/api/v1/settings/database").set(auth).expect(200);
    expect(settings.body.data).toMatchObject({ currentDatabase: "home_improvement", canSwitch: false });
    const otherSettings = await t.request().get("/api/v1/settings/database").set(other.auth).expect(200);
    expect(otherSettings.body.data).toMatchObject({ currentDatabase: "other", canSwitch: true });
  });

  it("allows a switch again once the cooldown has passed", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const longAgo = new Date(Date.now() - (SWITCH_COOLDOWN_DAYS + 1) * 86_400_000);
    await t.ctx.db
      .updateTable("accounts")
      .set({ smb_type: "home_improvement", database_switched_at: longAgo })
      .where("id", "=", accountId)
      .execute();
    const res = await t
      .request()
      .post("/api/v1/settings/switch-database")
      .set(auth)
      .send({ smbType: "other" })
      .expect(200);
    expect(res.body.data.currentDatabase).toBe("other");
  });

  it("rejects an unknown database with 400 validation_error and changes nothing", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .post("/api/v1/settings/switch-database")
      .set(auth)
      .send({ smbType: "restaurants" })
      .expect(400);
    expect(res.body.error).toBe("validation_error");
    const settings = await t.request().get("/api/v1/settings/database").set(auth).expect(200);
    expect(settings.body.data.lastSwitchedAt).toBeNull();
  });
});
