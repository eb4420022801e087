import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { sql } from "kysely";
import { pino } from "pino";
import supertest from "supertest";
import { describe, expect, it } from "vitest";
import { hashApiKey } from "../src/auth/api-keys.js";
import { KeyCache, LISTENER_APPLICATION_NAME } from "../src/auth/key-cache.js";
import { findKeyByHash, type KeyRecord } from "../src/auth/repository.js";
import { revokeKey } from "../src/auth/service.js";
import { createDatabase, type Db } from "../src/db/database.js";
import { NotificationListener } from "../src/db/notifications.js";
import { JobNotifier } from "../src/jobs/notifier.js";
import { SchemaTypesCache } from "../src/leads/schema-types.js";
import { createApp } from "../src/app/create-app.js";
import { RateLimits } from "../src/rate-limit/limiter.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount, buildKey } from "./helpers/factories.js";

const t = useTestApp();
const silent = pino({ level: "silent" });

/** A second API process on the same database: its own pool, rate limiter and key cache. */
async function secondInstance(options: { ttlMs?: number } = {}) {
  const { db, pool } = createDatabase(t.database.url, 4);
  const notifications = new NotificationListener({ connection: t.database.url, logger: silent });
  const keyCache = new KeyCache({ notifications, logger: silent, ...options });
  await keyCache.start();
  const app = createApp({ ...t.ctx, db, pool, rateLimits: new RateLimits(pool), keyCache });
  return {
    keyCache,
    request: () => supertest.agent(app),
    async close() {
      await keyCache.stop();
      await notifications.stop();
      await db.destroy();
    },
  };
}

/** Changes a key or an account without firing triggers: a notification that never arrives. */
async function withoutNotifications(db: Db, change: (trx: Db) => Promise<unknown>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx);
    await change(trx as unknown as Db);
  });
}

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

const keyCache = () => {
  const cache = t.ctx.keyCache;
  if (!cache) throw new Error("the test app has no key cache");
  return cache;
};

describe("API key cache", () => {
  it("serves a known key from memory and never caches an unknown key", async () => {
    expect(keyCache().active).toBe(true);
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const before = keyCache().size;
    await t.request().get("/api/v1/me").set(auth).expect(200);
    expect(keyCache().size).toBe(before + 1);
    await t.request().get("/api/v1/me").set(auth).expect(200);
    expect(keyCache().size).toBe(before + 1);

    await t
      .request()
      .get("/api/v1/me")
      .set({ Authorization: `Bearer svck_${"A".repeat(40)}` })
      .expect(401);
    expect(keyCache().size).toBe(before + 1);

    // A key created after a miss works at once (misses are not remembered).
    const second = await buildKey(t.ctx.db, accountId);
    await t.request().get("/api/v1/me").set(second.auth).expect(200);
  });

  it("answers 401 on the next request after a revocation, in this and in another instance", async () => {
    const other = await secondInstance();
    try {
      const { apiKey, auth } = await buildAccount(t.ctx.db);
      await t.request().get("/api/v1/me").set(auth).expect(200);
      await other.request().get("/api/v1/me").set(auth).expect(200);

      // This process's cache is told by the service at once; the other hears the trigger.
      await revokeKey(t.ctx.db, apiKey, keyCache());

      const here = await t.request().get("/api/v1/me").set(auth).expect(401);
      expect(here.body.message).toMatch(/revoked/);
      // The other process hears the trigger's notification (milliseconds; more on a busy machine).
      await until(() => !other.keyCache.has(hashApiKey(apiKey)));
      const there = await other.request().get("/api/v1/me").set(auth).expect(401);
      expect(there.body.message).toMatch(/revoked/);
    } finally {
      await other.close();
    }
  });

  it("hears of a revocation made by the admin CLI in another process", async () => {
    const { apiKey, auth } = await buildAccount(t.ctx.db);
    await t.request().get("/api/v1/me").set(auth).expect(200);
    expect(keyCache().has(hashApiKey(apiKey))).toBe(true);

    const { stdout } = await promisify(execFile)(
      "node",
      ["--import", "tsx", "src/cli/admin.ts", "revoke-key", "--key", apiKey],
      { env: { ...process.env, DATABASE_URL: t.database.url, LOG_LEVEL: "silent" } },
    );
    expect(JSON.parse(stdout.trim())).toMatchObject({ revoked: true });

    // Another process's change arrives as a notification (milliseconds; more on a busy machine).
    await until(() => !keyCache().has(hashApiKey(apiKey)));
    const res = await t.request().get("/api/v1/me").set(auth).expect(401);
    expect(res.body.message).toMatch(/revoked/);
  });

  it("hears of plan and subscription changes of the account, in every instance", async () => {
    const other = await secondInstance();
    try {
      const { accountId, apiKey, auth } = await buildAccount(t.ctx.db);
      const second = await buildKey(t.ctx.db, accountId);
      await t.request().get("/api/v1/me").set(auth).expect(200);
      await other.request().get("/api/v1/me").set(second.auth).expect(200);
      const heard = () =>
        until(() => !keyCache().has(hashApiKey(apiKey)) && !other.keyCache.has(hashApiKey(second.apiKey)));

      await t.ctx.db
        .updateTable("accounts")
        .set({ subscription_status: "canceled" })
        .where("id", "=", accountId)
        .execute();
      await heard();
      await t.request().get("/api/v1/me").set(auth).expect(403);
      await other.request().get("/api/v1/me").set(second.auth).expect(403);

      await t.ctx.db
        .updateTable("accounts")
        .set({ subscription_status: "active" })
        .where("id", "=", accountId)
        .execute();
      // The 403 answers were cached too: the reactivation's notification drops them.
      await heard();
      await t.request().get("/api/v1/me").set(auth).expect(200);
      await other.request().get("/api/v1/me").set(second.auth).expect(200);
      expect(other.keyCache.has(hashApiKey(second.apiKey))).toBe(true);

      await t.ctx.db.updateTable("accounts").set({ plan: null }).where("id", "=", accountId).execute();
      await heard();
      await other.request().get("/api/v1/me").set(second.auth).expect(403);
    } finally {
      await other.close();
    }
  });

  it("answers 401 once a cached key is deleted", async () => {
    const { accountId, apiKey, auth } = await buildAccount(t.ctx.db);
    await t.request().get("/api/v1/me").set(auth).expect(200);
    await t.ctx.db.deleteFrom("api_keys").where("account_id", "=", accountId).execute();
    await until(() => !keyCache().has(hashApiKey(apiKey)));
    await t.request().get("/api/v1/me").set(auth).expect(401);
  });

  it("forgets everything when its listener connection drops, and listens again", async () => {
    const { apiKey, auth } = await buildAccount(t.ctx.db);
    await t.request().get("/api/v1/me").set(auth).expect(200);
    expect(keyCache().size).toBeGreaterThan(0);

    // A revocation whose notification is never delivered, then the listener's connection dies.
    // (Raw SQL without triggers: nothing tells the cache.)
    await withoutNotifications(t.ctx.db, (trx) =>
      trx
        .updateTable("api_keys")
        .set({ revoked_at: new Date() })
        .where("key_hash", "=", hashApiKey(apiKey))
        .execute(),
    );
    expect(keyCache().has(hashApiKey(apiKey))).toBe(true);
    await sql`
      select pg_terminate_backend(pid) from pg_stat_activity
      where application_name = ${LISTENER_APPLICATION_NAME} and datname = current_database()`.execute(
      t.ctx.db,
    );
    await until(() => !keyCache().active);
    expect(keyCache().size).toBe(0);
    const res = await t.request().get("/api/v1/me").set(auth).expect(401);
    expect(res.body.message).toMatch(/revoked/);

    await until(() => keyCache().active);
    await t.request().get("/api/v1/me").set(auth).expect(401);
    const fresh = await buildAccount(t.ctx.db);
    await t.request().get("/api/v1/me").set(fresh.auth).expect(200);
    expect(keyCache().size).toBeGreaterThan(0);
  });

  it("reads a key again after its time to live, even without a notification", async () => {
    const other = await secondInstance({ ttlMs: 300 });
    try {
      const { accountId, auth } = await buildAccount(t.ctx.db);
      await other.request().get("/api/v1/me").set(auth).expect(200);
      await withoutNotifications(t.ctx.db, (trx) =>
        trx
          .updateTable("accounts")
          .set({ subscription_status: "canceled" })
          .where("id", "=", accountId)
          .execute(),
      );
      await new Promise((r) => setTimeout(r, 350));
      await other.request().get("/api/v1/me").set(auth).expect(403);
    } finally {
      await other.close();
    }
  });

  it("does not keep a lookup that an invalidation overtook", async () => {
    const cache = new KeyCache({ notifications: t.notifications, logger: silent });
    await cache.start();
    try {
      const record: KeyRecord = {
        keyId: 1,
        keyName: "k",
        keyPrefix: "svck_abcdefgh",
        revokedAt: null,
        accountId: 42,
        plan: "growth",
        subscriptionStatus: "active",
      };
      // The account changes while its key is being read: the (possibly old) answer is not kept.
      await cache.lookup("h1", async () => {
        cache.invalidateAccount(42);
        return record;
      });
      expect(cache.size).toBe(0);
      await cache.lookup("h1", async () => record);
      expect(cache.size).toBe(1);
      let loads = 0;
      await cache.lookup("h1", async () => {
        loads += 1;
        return record;
      });
      expect(loads).toBe(0);
    } finally {
      await cache.stop();
    }
    expect(cache.active).toBe(false);
  });

  it("shares one listener connection with the job notifier and the schema types cache", async () => {
    const listeners = async () => {
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from pg_stat_activity
        where application_name = ${LISTENER_APPLICATION_NAME} and datname = current_database()`.execute(
        t.ctx.db,
      );
      return rows[0]?.n ?? 0;
    };
    const before = await listeners();
    const notifications = new NotificationListener({ connection: t.database.url, logger: silent });
    const cache = new KeyCache({ notifications, logger: silent });
    const jobs = new JobNotifier(notifications);
    const schemaTypes = new SchemaTypesCache(t.ctx.db, silent, { notifications }).start();
    try {
      await Promise.all([cache.start(), jobs.start()]);
      expect(cache.active).toBe(true);
      expect(await listeners()).toBe(before + 1);

      // One subscriber leaving keeps the connection, and the others' channels, alive.
      await jobs.close();
      const { accountId, apiKey } = await buildAccount(t.ctx.db);
      const keyHash = hashApiKey(apiKey);
      await cache.lookup(keyHash, (hash) => findKeyByHash(t.ctx.db, hash));
      expect(cache.has(keyHash)).toBe(true);
      await t.ctx.db.updateTable("accounts").set({ plan: null }).where("id", "=", accountId).execute();
      await until(() => !cache.has(keyHash));
      expect(await listeners()).toBe(before + 1);
    } finally {
      await schemaTypes.stop();
      await cache.stop();
      await notifications.stop();
    }
    expect(cache.active).toBe(false);
    expect(await listeners()).toBe(before);
  });
});
