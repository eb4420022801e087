import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { Logger as WorkerLogger, runMigrations } from "graphile-worker";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { createDatabase, migrateToLatest } from "../src/db/database.js";
import { startEmbeddedPostgres, type EmbeddedServer } from "../src/db/embedded.js";

export const TEMPLATE_DATABASE = "lead_test_template";

declare module "vitest" {
  export interface ProvidedContext {
    /** Connection string of the test server's `postgres` database (the maintenance db). */
    testServerUrl: string;
    testTemplate: string;
  }
}

let embedded: EmbeddedServer | undefined;

/**
 * Starts one PostgreSQL for the run (embedded, or the server of TEST_DATABASE_URL) and migrates
 * a template database that every test file clones.
 */
export async function setup(project: TestProject): Promise<void> {
  let serverUrl: string;
  if (process.env.TEST_DATABASE_URL) {
    const url = new URL(process.env.TEST_DATABASE_URL);
    url.pathname = "/postgres";
    serverUrl = url.toString();
  } else {
    const dir = resolve(".test-data", String(process.pid));
    embedded = await startEmbeddedPostgres(dir, () => {});
    serverUrl = embedded.urlFor("postgres");
  }
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  const stale = await admin.query<{ datname: string }>(
    "select datname from pg_database where datname like 'lead_test_%'",
  );
  for (const { datname } of stale.rows)
    await admin.query(`drop database if exists "${datname}" with (force)`);
  await admin.query(`create database "${TEMPLATE_DATABASE}"`);
  await admin.end();

  const templateUrl = new URL(serverUrl);
  templateUrl.pathname = `/${TEMPLATE_DATABASE}`;
  const { db, pool } = createDatabase(templateUrl.toString(), 2);
  await migrateToLatest(db);
  // graphile-worker's schema too: requests queue jobs (mail, event dispatch) in their own
  // transactions, as in a started service (src/main.ts installs it before serving).
  await runMigrations({ pgPool: pool, logger: new WorkerLogger(() => () => {}) });
  await db.destroy();

  project.provide("testServerUrl", serverUrl);
  project.provide("testTemplate", TEMPLATE_DATABASE);
}

export async function teardown(): Promise<void> {
  if (embedded) {
    await embedded.stop();
    rmSync(resolve(".test-data", String(process.pid)), { recursive: true, force: true });
  }
}
