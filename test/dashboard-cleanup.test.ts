import { randomBytes } from "node:crypto";
import { parseCrontab, type JobHelpers } from "graphile-worker";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DASHBOARD_CLEANUP_CRONTAB,
  DASHBOARD_CLEANUP_TASK,
  dashboardCleanup,
  deleteEndedSignIns,
} from "../src/auth/sessions/cleanup.js";
import type { Db } from "../src/db/database.js";
import { createTestDatabase, type TestDatabase } from "./helpers/db.js";
import { buildAccount } from "./helpers/factories.js";

// The periodic cleanup of the dashboard's sign-in links and sessions (docs/dashboard.md): rows
// that ended (used, expired, revoked) over a day ago go; live ones and recently ended ones stay.
let tdb: TestDatabase;
let db: Db;
beforeAll(async () => {
  tdb = await createTestDatabase();
  db = tdb.db;
}, 60_000);
afterAll(async () => tdb?.destroy());

const HOUR = 3_600_000;
const ago = (ms: number) => new Date(Date.now() - ms);
const later = (ms: number) => new Date(Date.now() + ms);
const hash = () => randomBytes(32).toString("hex");

async function link(accountId: number, expiresAt: Date, usedAt: Date | null): Promise<string> {
  const row = await db
    .insertInto("dashboard_sign_in_links")
    .values({ account_id: accountId, token_hash: hash(), expires_at: expiresAt, used_at: usedAt })
    .returning("id")
    .executeTakeFirstOrThrow();
  return String(row.id);
}

async function session(accountId: number, expiresAt: Date, revokedAt: Date | null): Promise<string> {
  const row = await db
    .insertInto("dashboard_sessions")
    .values({ account_id: accountId, token_hash: hash(), expires_at: expiresAt, revoked_at: revokedAt })
    .returning("id")
    .executeTakeFirstOrThrow();
  return String(row.id);
}

async function remaining(table: "dashboard_sign_in_links" | "dashboard_sessions", ids: string[]) {
  const rows = await db.selectFrom(table).select("id").where("id", "in", ids).execute();
  return rows.map((r) => String(r.id)).sort();
}

describe("the cleanup of sign-in links and sessions", () => {
  it("deletes links and sessions ended over a day ago and keeps live and recently ended ones", async () => {
    const { accountId } = await buildAccount(db);
    const oldLinks = [
      await link(accountId, ago(25 * HOUR), null), // expired a day ago, never used
      await link(accountId, ago(30 * HOUR), ago(30.1 * HOUR)), // used long ago
    ];
    const keptLinks = [
      await link(accountId, later(10 * 60_000), null), // live
      await link(accountId, ago(2 * HOUR), null), // expired, but not a day ago yet
      await link(accountId, ago(23 * HOUR), ago(23.1 * HOUR)), // used within the day
    ];
    const oldSessions = [
      await session(accountId, ago(25 * HOUR), null), // expired a day ago
      await session(accountId, later(5 * 24 * HOUR), ago(26 * HOUR)), // revoked a day ago
    ];
    const keptSessions = [
      await session(accountId, later(7 * 24 * HOUR), null), // live
      await session(accountId, later(6 * 24 * HOUR), ago(HOUR)), // revoked an hour ago
      await session(accountId, ago(20 * HOUR), null), // expired within the day
    ];

    const removed = await deleteEndedSignIns(db);
    expect(removed).toEqual({ links: 2, sessions: 2 });
    expect(await remaining("dashboard_sign_in_links", [...oldLinks, ...keptLinks])).toEqual(keptLinks.sort());
    expect(await remaining("dashboard_sessions", [...oldSessions, ...keptSessions])).toEqual(
      keptSessions.sort(),
    );

    // A second run finds nothing more of these.
    expect(await deleteEndedSignIns(db)).toEqual({ links: 0, sessions: 0 });
  });

  it("runs as the crontab's task, once an hour", async () => {
    const [item] = parseCrontab(DASHBOARD_CLEANUP_CRONTAB);
    expect(item?.task).toBe(DASHBOARD_CLEANUP_TASK);
    expect(item?.match).toBeTypeOf("function");

    const { accountId } = await buildAccount(db);
    const old = await session(accountId, ago(48 * HOUR), null);
    const live = await session(accountId, later(HOUR), null);
    const logged: string[] = [];
    const helpers = { logger: { info: (m: string) => logged.push(m) } } as unknown as JobHelpers;
    await dashboardCleanup({ db })({}, helpers);
    expect(await remaining("dashboard_sessions", [old, live])).toEqual([live]);
    expect(logged.join()).toContain("1 session(s)");
    // The database's clock decides "a day ago", as for the sign-in checks.
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from dashboard_sessions
      where revoked_at < now() - interval '1 day' or expires_at < now() - interval '1 day'`.execute(db);
    expect(rows[0]?.n).toBe(0);
  });
});
