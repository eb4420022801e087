import pg from "pg";
import supertest from "supertest";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/app/create-app.js";
import { SchemaTypesCache } from "../src/leads/schema-types.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLead } from "./helpers/leads-factories.js";

const t = useTestApp();

/** Polls until the app answers the list (its background build finished). */
async function waitForList(app: ReturnType<typeof createApp>, auth: { Authorization: string }) {
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
    const schemaTypes = new SchemaTypesCache(t.ctx.db, t.ctx.logger).start();
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
    schemaTypes.stop();
    expect(ready.body).toEqual({ data: ["Dentist", "LocalBusiness", "Plumber"] });
  });

  it("needs a valid key and a paid plan", async () => {
    await t.request().get("/api/v1/leads/other/schema-types").expect(401);
    const canceled = await buildAccount(t.ctx.db, { status: "canceled" });
    await t.request().get("/api/v1/leads/other/schema-types").set(canceled.auth).expect(403);
  });
});
