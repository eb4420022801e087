import { describe, expect, it } from "vitest";
import { hashApiKey } from "../src/auth/api-keys.js";
import { revokeKeyByHash } from "../src/auth/repository.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";

const t = useTestApp();

describe("GET /me", () => {
  it("returns the profile with the plan's credits", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db, { plan: "growth", permanentCredits: 150 });
    const res = await t.request().get("/api/v1/me").set(auth).expect(200);
    expect(res.body.data).toMatchObject({
      id: accountId,
      smbType: "other",
      subscriptionPlan: "growth",
      subscriptionStatus: "active",
      isSubscribed: true,
      monthlyCredits: 2000,
      monthlyCreditsUsed: 0,
      monthlyCreditsRemaining: 2000,
      permanentCredits: 150,
      totalCreditsRemaining: 2150,
      creditOverageRate: 7.5,
    });
    expect(res.headers["x-ratelimit-limit"]).toBe("600");
    expect(res.headers["x-ratelimit-remaining"]).toBe("599");
    expect(new Date(res.headers["x-ratelimit-reset"] as string).toISOString()).toBe(
      res.headers["x-ratelimit-reset"],
    );
  });

  it("gives a trial half of the plan's monthly credits", async () => {
    const { auth } = await buildAccount(t.ctx.db, { plan: "starter", status: "trialing" });
    const res = await t.request().get("/api/v1/me").set(auth).expect(200);
    expect(res.body.data).toMatchObject({
      subscriptionStatus: "trialing",
      monthlyCredits: 250,
      creditOverageRate: 10,
    });
  });

  it("answers 401 without a key, with an unknown key and with a malformed header", async () => {
    for (const headers of [
      {},
      { Authorization: "Bearer svck_" + "x".repeat(40) },
      { Authorization: "Basic abc" },
    ]) {
      const res = await t.request().get("/api/v1/me").set(headers).expect(401);
      expect(res.body.error).toBe("unauthorized");
    }
  });

  it("answers 401 saying the key was revoked", async () => {
    const { apiKey, auth } = await buildAccount(t.ctx.db);
    await revokeKeyByHash(t.ctx.db, hashApiKey(apiKey));
    const res = await t.request().get("/api/v1/me").set(auth).expect(401);
    expect(res.body).toMatchObject({ error: "unauthorized" });
    expect(res.body.message).toMatch(/revoked/);
  });

  it("answers 403 for an account without an active or trialing plan", async () => {
    const { auth } = await buildAccount(t.ctx.db, { status: "canceled" });
    const res = await t.request().get("/api/v1/me").set(auth).expect(403);
    expect(res.body.error).toBe("forbidden");
  });
});

describe("PATCH /me", () => {
  it("changes only the writable fields and ignores the rest", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .patch("/api/v1/me")
      .set(auth)
      .send({
        firstName: "Ada",
        companyWebsite: "https://ada.example",
        email: "evil@example.com",
        monthlyCredits: 1e9,
      })
      .expect(200);
    expect(res.body.data).toMatchObject({
      id: accountId,
      firstName: "Ada",
      companyWebsite: "https://ada.example",
    });
    expect(res.body.data.email).not.toBe("evil@example.com");
    expect(res.body.data.monthlyCredits).toBe(2000);
  });

  it("answers 400 bad_request when no writable field is sent, changing nothing", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t.request().patch("/api/v1/me").set(auth).send({ email: "x@example.com" }).expect(400);
    expect(res.body.error).toBe("bad_request");
  });

  it("answers 400 validation_error with details for wrong types", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .patch("/api/v1/me")
      .set(auth)
      .send({ firstName: 42, lastName: "" })
      .expect(400);
    expect(res.body.error).toBe("validation_error");
    expect(res.body.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: ["body", "firstName"] }),
        expect.objectContaining({ path: ["body", "lastName"] }),
      ]),
    );
  });

  it("answers 400 validation_error for malformed JSON", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .patch("/api/v1/me")
      .set(auth)
      .set("Content-Type", "application/json")
      .send('{"firstName": ')
      .expect(400);
    expect(res.body).toMatchObject({ error: "validation_error", details: [{ path: ["body"] }] });
  });

  it("changes only the caller's account", async () => {
    const a = await buildAccount(t.ctx.db);
    const b = await buildAccount(t.ctx.db);
    await t.request().patch("/api/v1/me").set(a.auth).send({ lastName: "Only-A" }).expect(200);
    const other = await t.request().get("/api/v1/me").set(b.auth).expect(200);
    expect(other.body.data.id).toBe(b.accountId);
    expect(other.body.data.lastName).toBeNull();
  });
});

describe("unknown endpoints", () => {
  it("answer 404 not_found", async () => {
    const res = await t.request().get("/api/v1/nothing-here").expect(404);
    expect(res.body).toEqual({ error: "not_found", message: expect.any(String) });
  });
});
