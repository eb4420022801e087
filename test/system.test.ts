import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import supertest from "supertest";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { Database } from "../src/db/schema.js";
import { createApp } from "../src/app/create-app.js";
import { loadSpec } from "../src/http/spec.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";

const t = useTestApp();

describe("system endpoints", () => {
  it("GET /api/v1/health answers ok without a key", async () => {
    const res = await t.request().get("/api/v1/health").expect(200);
    expect(res.body).toEqual({ status: "ok", version: "1.0.0", time: expect.any(String) });
  });

  it("GET /openapi.yaml serves the contract", async () => {
    const res = await t.request().get("/openapi.yaml").expect(200);
    expect(res.headers["content-type"]).toMatch(/yaml/);
    const doc = parse(res.text) as { openapi: string; info: { version: string }; paths: object };
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe("1.0.0");
    expect(Object.keys(doc.paths)).toContain("/api/v1/me");
  });

  it("the service reads openapi.yaml into the same document as the yaml package", async () => {
    const res = await t.request().get("/openapi.yaml").expect(200);
    expect(loadSpec().document).toStrictEqual(parse(res.text));
  });

  it("GET /docs serves the interactive reference", async () => {
    const res = await t.request().get("/docs/").expect(200);
    expect(res.headers["content-type"]).toMatch(/html/);
    expect(res.text).toContain("swagger-ui");
  });
});

describe("unexpected failures", () => {
  it("answer 500 internal_error without internal details", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    // A database driver that fails with an error of its own: every query fails inside the request.
    const pool = {
      connect: async () => {
        throw new Error("driver failure at 10.1.2.3 for postgres user svc");
      },
      end: async () => undefined,
    } as unknown as pg.Pool;
    const brokenDb = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    try {
      const app = createApp({ ...t.ctx, db: brokenDb });
      const res = await supertest(app).get("/api/v1/me").set(auth).expect(500);
      expect(res.body).toEqual({ error: "internal_error", message: "An unexpected error occurred." });
      expect(JSON.stringify(res.body)).not.toMatch(/driver|10\.1\.2\.3|postgres/);
    } finally {
      await brokenDb.destroy();
    }
  });

  // A database that cannot be reached is a dependency down, not a bug: 503 with Retry-After
  // (docs/reliability.md; test/faults-postgres-outage.test.ts cuts a live one).
  it("answer 503 service_unavailable with Retry-After when the database cannot be reached", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const pool = new pg.Pool({ connectionString: "postgres://nobody:wrong@127.0.0.1:1/none", max: 1 });
    const unreachableDb = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    try {
      const app = createApp({ ...t.ctx, db: unreachableDb });
      const res = await supertest(app).get("/api/v1/me").set(auth).expect(503);
      expect(res.body).toMatchObject({ error: "service_unavailable" });
      expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
      expect(JSON.stringify(res.body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres/);
    } finally {
      await unreachableDb.destroy();
    }
  });
});
