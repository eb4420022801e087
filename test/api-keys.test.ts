import { describe, expect, it } from "vitest";
import { MAX_ACTIVE_KEYS } from "../src/auth/key-management.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount, buildKey } from "./helpers/factories.js";
import { expectKeyAndPlanRequired } from "./helpers/lead-records-factories.js";

const t = useTestApp();

type Auth = { Authorization: string };

interface KeyBody {
  id: number;
  name: string;
  keyPrefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revoked: boolean;
  revokedAt: string | null;
  key?: string;
}

async function listKeys(auth: Auth): Promise<KeyBody[]> {
  const res = await t.request().get("/api/v1/api-keys").set(auth).expect(200);
  return res.body.data as KeyBody[];
}

async function createKey(auth: Auth, name = "CRM sync"): Promise<KeyBody & { key: string }> {
  const res = await t.request().post("/api/v1/api-keys").set(auth).send({ name }).expect(201);
  return res.body.data as KeyBody & { key: string };
}

async function keyRows(accountId: number) {
  return t.ctx.db.selectFrom("api_keys").selectAll().where("account_id", "=", accountId).execute();
}

describe("GET /api-keys", () => {
  it("lists the account's keys newest first, with prefix, dates and no secret", async () => {
    const { auth, apiKey } = await buildAccount(t.ctx.db);
    const before = await listKeys(auth);
    expect(before).toHaveLength(1);
    expect(before[0]).toEqual({
      id: expect.any(Number),
      name: "Default key",
      keyPrefix: apiKey.slice(0, 13),
      createdAt: expect.any(String),
      lastUsedAt: before[0]!.lastUsedAt === null ? null : expect.any(String),
      revoked: false,
      revokedAt: null,
    });
    // Each request with the key is a use: its last use is recorded (at most once a minute, not awaited).
    await expect.poll(async () => (await listKeys(auth))[0]!.lastUsedAt, { timeout: 5000 }).not.toBeNull();
    const lastUsedAt = (await listKeys(auth))[0]!.lastUsedAt!;
    expect(Date.now() - Date.parse(lastUsedAt)).toBeLessThan(60_000);
    const second = await createKey(auth, "Second");
    const after = await listKeys(auth);
    expect(after.map((k) => k.name)).toEqual(["Second", "Default key"]);
    expect(after[0]).toMatchObject({ id: second.id, lastUsedAt: null, revoked: false });
    expect(JSON.stringify(after)).not.toContain(second.key);
    expect(after.every((k) => !("key" in k))).toBe(true);
  });

  it("never lists another account's keys", async () => {
    const a = await buildAccount(t.ctx.db);
    const b = await buildAccount(t.ctx.db);
    const bKey = await createKey(b.auth, "B only");
    const listed = await listKeys(a.auth);
    expect(listed.map((k) => k.id)).not.toContain(bKey.id);
    expect(listed).toHaveLength(1);
  });
});

describe("POST /api-keys", () => {
  it("creates a working svck_ key shown once, stored hashed, its name trimmed", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const created = await createKey(auth, "  Zapier  ");
    expect(created).toEqual({
      id: expect.any(Number),
      name: "Zapier",
      keyPrefix: created.key.slice(0, 13),
      createdAt: expect.any(String),
      lastUsedAt: null,
      revoked: false,
      revokedAt: null,
      key: expect.stringMatching(/^svck_[A-Za-z0-9]{40}$/),
    });
    const rows = await keyRows(accountId);
    const row = rows.find((r) => r.id === created.id)!;
    expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(rows)).not.toContain(created.key);
    // The new key works at once, for the same account.
    const me = await t
      .request()
      .get("/api/v1/me")
      .set({ Authorization: `Bearer ${created.key}` })
      .expect(200);
    expect(me.body.data.id).toBe(accountId);
  });

  it("refuses bad names with 400 validation_error and creates nothing", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    for (const body of [
      {},
      { name: "" },
      { name: "   " },
      { name: "x".repeat(101) },
      { name: 5 },
      { name: null },
    ]) {
      const res = await t.request().post("/api/v1/api-keys").set(auth).send(body).expect(400);
      expect(res.body).toMatchObject({ error: "validation_error", message: expect.any(String) });
      expect(res.body.details?.[0]?.path?.[0]).toBe("body");
    }
    expect(await keyRows(accountId)).toHaveLength(1);
  });

  it("answers 409 api_key_limit past 25 active keys; a revoked key frees a place", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    for (let i = 1; i < MAX_ACTIVE_KEYS; i += 1) await buildKey(t.ctx.db, accountId, `k${i}`);
    const refused = await t
      .request()
      .post("/api/v1/api-keys")
      .set(auth)
      .send({ name: "one more" })
      .expect(409);
    expect(refused.body).toEqual({ error: "api_key_limit", message: expect.stringContaining("25") });
    expect(await keyRows(accountId)).toHaveLength(MAX_ACTIVE_KEYS);
    const victim = (await listKeys(auth)).find((k) => k.name === "k1")!;
    await t.request().post(`/api/v1/api-keys/${victim.id}/revoke`).set(auth).expect(200);
    await createKey(auth, "one more");
  });
});

describe("POST /api-keys/{id}/revoke", () => {
  it("revokes a key: it is refused with 401 at once, listed as revoked; revoking again changes nothing", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const other = await createKey(auth, "to revoke");
    const otherAuth = { Authorization: `Bearer ${other.key}` };
    await t.request().get("/api/v1/me").set(otherAuth).expect(200);
    const res = await t.request().post(`/api/v1/api-keys/${other.id}/revoke`).set(auth).expect(200);
    expect(res.body.data).toMatchObject({
      id: other.id,
      name: "to revoke",
      revoked: true,
      revokedAt: expect.any(String),
    });
    const refused = await t.request().get("/api/v1/me").set(otherAuth).expect(401);
    expect(refused.body).toMatchObject({
      error: "unauthorized",
      message: expect.stringContaining("revoked"),
    });
    const again = await t.request().post(`/api/v1/api-keys/${other.id}/revoke`).set(auth).expect(200);
    expect(again.body.data.revokedAt).toBe(res.body.data.revokedAt);
    const listed = (await listKeys(auth)).find((k) => k.id === other.id);
    expect(listed).toMatchObject({ revoked: true, revokedAt: res.body.data.revokedAt });
    expect((await keyRows(accountId)).filter((r) => r.revoked_at === null)).toHaveLength(1);
  });

  it("lets a key revoke itself: its next request is refused", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const self = (await listKeys(auth))[0]!;
    await t.request().post(`/api/v1/api-keys/${self.id}/revoke`).set(auth).expect(200);
    await t.request().get("/api/v1/api-keys").set(auth).expect(401);
  });

  it("answers 404 for another account's key and leaves it working; 400 for a bad id", async () => {
    const a = await buildAccount(t.ctx.db);
    const b = await buildAccount(t.ctx.db);
    const bKey = (await listKeys(b.auth))[0]!;
    const res = await t.request().post(`/api/v1/api-keys/${bKey.id}/revoke`).set(a.auth).expect(404);
    expect(res.body).toEqual({ error: "not_found", message: expect.any(String) });
    await t.request().get("/api/v1/me").set(b.auth).expect(200);
    await t.request().post("/api/v1/api-keys/999999999/revoke").set(a.auth).expect(404);
    const bad = await t.request().post("/api/v1/api-keys/abc/revoke").set(a.auth).expect(400);
    expect(bad.body.error).toBe("validation_error");
  });
});

describe("API key operations need a valid key of a paid account", () => {
  it("answers 401 for a missing, unknown or revoked key and 403 for an unpaid account", async () => {
    await expectKeyAndPlanRequired(t, [
      { method: "get", path: "/api/v1/api-keys" },
      { method: "post", path: "/api/v1/api-keys", body: { name: "x" } },
      { method: "post", path: "/api/v1/api-keys/1/revoke" },
    ]);
  });

  it("creates nothing for an unpaid account", async () => {
    const canceled = await buildAccount(t.ctx.db, { status: "canceled" });
    await t.request().post("/api/v1/api-keys").set(canceled.auth).send({ name: "x" }).expect(403);
    expect(await keyRows(canceled.accountId)).toHaveLength(1);
  });
});
