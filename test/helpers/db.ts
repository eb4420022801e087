import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import { createDatabase, type Db } from "../../src/db/database.js";

/** A fresh database cloned from the migrated template, for one test file. */
export interface TestDatabase {
  db: Db;
  pool: pg.Pool;
  url: string;
  destroy(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = inject("testServerUrl");
  const template = inject("testTemplate");
  const name = `lead_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database "${name}" template "${template}"`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const { db, pool } = createDatabase(url.toString(), 10);
  return {
    db,
    pool,
    url: url.toString(),
    async destroy() {
      await db.destroy();
      const cleanup = new pg.Client({ connectionString: serverUrl });
      await cleanup.connect();
      await cleanup.query(`drop database if exists "${name}" with (force)`);
      await cleanup.end();
    },
  };
}
