import { sql } from "kysely";
import pg from "pg";
import { pino } from "pino";
import supertest from "supertest";
import { describe, expect, it } from "vitest";
import { LISTENER_APPLICATION_NAME, NotificationListener } from "../src/db/notifications.js";
import { createApp } from "../src/app/create-app.js";
import { LEADS_IMPORTED_CHANNEL } from "../src/leads/import/announce.js";
import { SchemaTypesCache } from "../src/leads/schema-types.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLead, uniqueWord } from "./helpers/leads-factories.js";
import { ndjson, runAdminCli, tempFolder } from "./helpers/leads-import-factories.js";

const t = useTestApp();
const silent = pino({ level: "silent" });
type Auth = { Authorization: string };

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * An API process as a composition root builds it: a shared listener, the schema types cache
 * subscribed on it, and the app serving that cache.
 */
function announcedApp() {
  const notifications = new NotificationListener({ connection: t.database.url, logger: silent });
  const cache = new SchemaTypesCache(t.ctx.db, silent, { notifications }).start();
  const app = createApp({ ...t.ctx, schemaTypes: cache });
  return {
    app,
    cache,
    notifications,
    async stop() {
      await cache.stop();
      await notifications.stop();
    },
  };
}

/** Polls the endpoint until it lists `type` (a short deadline: no long sleeps). */
async function untilListed(app: ReturnType<typeof createApp>, auth: Auth, type: string, timeoutMs: number) {
  await until(async () => {
    const res = await supertest(app).get("/api/v1/leads/other/schema-types").set(auth);
    return res.status === 200 && (res.body.data as string[]).includes(type);
  }, timeoutMs);
}

/** Ends the listener connections of this test file's database (as a network failure would). */
async function dropListenerConnections(): Promise<void> {
  await sql`
    select pg_terminate_backend(pid) from pg_stat_activity
    where application_name = ${LISTENER_APPLICATION_NAME} and datname = current_database()`.execute(t.ctx.db);
}

/** Polls until the app answers the list (its background build finished). */
async function waitForList(app: ReturnType<typeof createApp>, auth: Auth) {
  for (let i = 0; i < 300; i += 1) {
    const res = await supertest(app).get("/api/v1/leads/other/schema-types").set(auth);
    if (res.status === 200) return res;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("the schema type list was never built");
}

describe("GET /leads/other/schema-types", () => {
  it("answers 503 schema_types_warming (Retry-After 60) while the list is being built, then the sorted distinct types", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    await buildLead(t.ctx.db, { website_schema_types: ["Plumber", "LocalBusiness"] });
    await buildLead(t.ctx.db, { website_schema_types: ["Dentist", "Plumber"] });
    await buildLead(t.ctx.db, { website_schema_types: [] });

    // A process that has just started: its build waits behind a lock on the lead table.
    const locker = new pg.Client({ connectionString: t.database.url });
    await locker.connect();
    await locker.query("begin");
    await locker.query("lock table leads in access exclusive mode");
    const schemaTypes = new SchemaTypesCache(t.ctx.db, t.ctx.logger, {
      notifications: t.notifications,
    }).start();
    const app = createApp({ ...t.ctx, schemaTypes });
    try {
      const warming = await supertest(app).get("/api/v1/leads/other/schema-types").set(auth).expect(503);
      expect(warming.body.error).toBe("schema_types_warming");
      expect(warming.headers["retry-after"]).toBe("60");
    } finally {
      await locker.query("commit");
      await locker.end();
    }
    const ready = await waitForList(app, auth);
    await schemaTypes.stop();
    expect(ready.body).toEqual({ data: ["Dentist", "LocalBusiness", "Plumber"] });
  });

  it("needs a valid key and a paid plan", async () => {
    await t.request().get("/api/v1/leads/other/schema-types").expect(401);
    const canceled = await buildAccount(t.ctx.db, { status: "canceled" });
    await t.request().get("/api/v1/leads/other/schema-types").set(canceled.auth).expect(403);
  });

  it("lists a type within seconds of an import by the admin CLI in another process", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const { app, stop } = announcedApp();
    const files = tempFolder();
    try {
      const type = `Type${uniqueWord()}`;
      expect((await waitForList(app, auth)).body.data).not.toContain(type);
      const file = files.write("leads.ndjson", ndjson([{ id: uniqueWord(), websiteSchemaTypes: [type] }]));
      const run = await runAdminCli(t.database.url, ["import-leads", file]);
      expect(run.json).toMatchObject({ imported: 1 });
      // Only the import's announcement can bring it this soon (the periodic rebuild is 10 minutes).
      await untilListed(app, auth, type, 3_000);
    } finally {
      files.remove();
      await stop();
    }
  });

  it("rebuilds one at a time: announcements during a build cause exactly one more build", async () => {
    const { cache, notifications, stop } = announcedApp();
    const heard: string[] = [];
    const probe = notifications.subscribe(LEADS_IMPORTED_CHANNEL, { message: (p) => heard.push(p) });
    const locker = new pg.Client({ connectionString: t.database.url });
    await locker.connect();
    try {
      await probe.ready;
      await until(() => cache.builds === 1);
      await locker.query("begin");
      await locker.query("lock table leads in access exclusive mode");
      const announce = () => sql`select pg_notify(${LEADS_IMPORTED_CHANNEL}, '')`.execute(t.ctx.db);
      await announce();
      // The rebuild it started waits behind the lock; two more announcements arrive meanwhile.
      await until(async () => {
        const { rows } = await sql<{ n: number }>`
          select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'`.execute(t.ctx.db);
        return (rows[0]?.n ?? 0) > 0;
      });
      await announce();
      await announce();
      // The cache subscribed first, so it has handled every announcement the probe has.
      await until(() => heard.length === 3);
      await locker.query("commit");
      await until(() => cache.builds === 3);
      await new Promise((r) => setTimeout(r, 200));
      expect(cache.builds).toBe(3);
    } finally {
      await locker.end();
      await probe.unsubscribe();
      await stop();
    }
  });

  it("rebuilds when its listener connection is back, since an announcement may have been missed", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const { app, cache, stop } = announcedApp();
    try {
      await waitForList(app, auth);
      await until(() => cache.builds === 1);
      // A lead whose announcement never comes, then the listener's connection dies.
      const type = `Type${uniqueWord()}`;
      await buildLead(t.ctx.db, { website_schema_types: [type] });
      await dropListenerConnections();
      await untilListed(app, auth, type, 5_000);
      expect(cache.builds).toBe(2);
    } finally {
      await stop();
    }
  });

  it("stops: no rebuild after stop(), and its subscription is gone", async () => {
    const { cache, notifications, stop } = announcedApp();
    await until(() => cache.builds === 1);
    await stop();
    await sql`select pg_notify(${LEADS_IMPORTED_CHANNEL}, '')`.execute(t.ctx.db);
    await new Promise((r) => setTimeout(r, 100));
    expect(cache.builds).toBe(1);
    expect(notifications.listening).toBe(false);
  });
});
