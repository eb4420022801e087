import { describe, expect, it } from "vitest";
import { resolveExportFormat } from "../src/export-formats/service.js";
import { useTestApp } from "./helpers/app.js";
import { formatBody } from "./helpers/export-factories.js";
import { buildAccount } from "./helpers/factories.js";

const t = useTestApp();
const BASE = "/api/v1/export-formats";

async function create(auth: Record<string, string>, overrides: Record<string, unknown> = {}) {
  const res = await t.request().post(BASE).set(auth).send(formatBody(overrides)).expect(201);
  return res.body.data as Record<string, unknown> & { id: number };
}

async function count(accountId: number): Promise<number> {
  const row = await t.ctx.db
    .selectFrom("export_formats")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("account_id", "=", accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe("POST /export-formats", () => {
  it("creates a format with the defaults and answers it", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .post(BASE)
      .set(auth)
      .send(
        formatBody({
          fieldMappings: [
            { sourceField: "companyName", exportName: "Company", type: "field" },
            { sourceField: "whatever", exportName: "Gap", type: "spacer" },
            { sourceField: "wPhonePrimary", exportName: "Phone", type: "field" },
          ],
          isDefault: true,
          unknownField: 1,
        }),
      )
      .expect(201);
    expect(res.body.data).toMatchObject({
      name: "My CSV",
      fileType: "csv",
      startRow: 1,
      isDefault: false,
      splitFiles: false,
      splitMode: null,
      maxRowsPerFile: null,
      numberOfParts: null,
      includeTotal: false,
      includeHeaders: true,
      databaseType: "other",
      combinedAssigneeColumnName: null,
      combinedFileNameColumnName: null,
    });
    expect(res.body.data.fieldMappings).toEqual([
      { sourceField: "companyName", exportName: "Company", type: "field" },
      { sourceField: "", exportName: "Gap", type: "spacer" },
      { sourceField: "wPhonePrimary", exportName: "Phone", type: "field" },
    ]);
    const got = await t.request().get(`${BASE}/${res.body.data.id}`).set(auth).expect(200);
    expect(got.body.data).toEqual(res.body.data);
  });

  it("stores only the values the split mode uses", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const maxRows = await create(auth, {
      splitFiles: true,
      splitMode: "max_rows",
      maxRowsPerFile: 10,
      numberOfParts: 5,
    });
    expect(maxRows).toMatchObject({ splitMode: "max_rows", maxRowsPerFile: 10, numberOfParts: null });
    const equal = await create(auth, {
      splitFiles: true,
      splitMode: "equal_parts",
      maxRowsPerFile: 50,
      numberOfParts: 2,
    });
    expect(equal).toMatchObject({ splitMode: "equal_parts", maxRowsPerFile: null, numberOfParts: 2 });
    const both = await create(auth, {
      splitFiles: true,
      splitMode: "parts_max_rows",
      maxRowsPerFile: 100000,
      numberOfParts: 100,
      includeTotal: true,
    });
    expect(both).toMatchObject({ maxRowsPerFile: 100000, numberOfParts: 100, includeTotal: true });
    const off = await create(auth, { splitFiles: false, splitMode: "max_rows", maxRowsPerFile: 10 });
    expect(off).toMatchObject({
      splitFiles: false,
      splitMode: null,
      maxRowsPerFile: null,
      numberOfParts: null,
    });
  });

  it.each([
    ["an empty name", { name: "" }, "name"],
    ["a blank name", { name: "   " }, "name"],
    ["a name over 100 characters", { name: "n".repeat(101) }, "name"],
    ["an unknown file type", { fileType: "pdf" }, "fileType"],
    ["startRow 0", { startRow: 0 }, "startRow"],
    ["startRow 101", { startRow: 101 }, "startRow"],
    ["no field mappings", { fieldMappings: [] }, "fieldMappings"],
    [
      "an unknown lead field",
      { fieldMappings: [{ sourceField: "shoeSize", exportName: "X", type: "field" }] },
      "fieldMappings",
    ],
    [
      "an empty sourceField",
      { fieldMappings: [{ sourceField: "", exportName: "X", type: "field" }] },
      "fieldMappings",
    ],
    [
      "an empty exportName",
      { fieldMappings: [{ sourceField: "city", exportName: "", type: "field" }] },
      "fieldMappings",
    ],
    [
      "an unknown mapping type",
      { fieldMappings: [{ sourceField: "city", exportName: "City", type: "formula" }] },
      "fieldMappings",
    ],
    [
      "a mapping without type",
      { fieldMappings: [{ sourceField: "city", exportName: "City" }] },
      "fieldMappings",
    ],
    ["splitFiles without splitMode", { splitFiles: true }, "splitMode"],
    ["max_rows without maxRowsPerFile", { splitFiles: true, splitMode: "max_rows" }, "maxRowsPerFile"],
    ["equal_parts without numberOfParts", { splitFiles: true, splitMode: "equal_parts" }, "numberOfParts"],
    [
      "parts_max_rows without numberOfParts",
      { splitFiles: true, splitMode: "parts_max_rows", maxRowsPerFile: 10 },
      "numberOfParts",
    ],
    ["maxRowsPerFile 9", { splitFiles: true, splitMode: "max_rows", maxRowsPerFile: 9 }, "maxRowsPerFile"],
    [
      "maxRowsPerFile 100,001",
      { splitFiles: true, splitMode: "max_rows", maxRowsPerFile: 100001 },
      "maxRowsPerFile",
    ],
    ["numberOfParts 1", { splitFiles: true, splitMode: "equal_parts", numberOfParts: 1 }, "numberOfParts"],
    [
      "numberOfParts 101",
      { splitFiles: true, splitMode: "equal_parts", numberOfParts: 101 },
      "numberOfParts",
    ],
    ["an unknown split mode", { splitFiles: true, splitMode: "halves" }, "splitMode"],
    [
      "a combined column name over 100",
      { combinedAssigneeColumnName: "c".repeat(101) },
      "combinedAssigneeColumnName",
    ],
  ])("rejects %s with 400 validation_error and stores nothing", async (_label, overrides, field) => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const res = await t.request().post(BASE).set(auth).send(formatBody(overrides)).expect(400);
    expect(res.body.error).toBe("validation_error");
    expect(res.body.details.some((d: { path: string[] }) => d.path.includes(field))).toBe(true);
    expect(await count(accountId)).toBe(0);
  });

  it("rejects a missing required field", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    for (const field of ["name", "fileType", "fieldMappings"]) {
      const body = formatBody();
      delete body[field];
      const res = await t.request().post(BASE).set(auth).send(body).expect(400);
      expect(res.body.error).toBe("validation_error");
    }
    expect(await count(accountId)).toBe(0);
  });

  it("answers export_too_large for an XLSX format with maxRowsPerFile above 20,000", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .post(BASE)
      .set(auth)
      .send(formatBody({ fileType: "xlsx", splitFiles: true, splitMode: "max_rows", maxRowsPerFile: 20001 }))
      .expect(400);
    expect(res.body.error).toBe("export_too_large");
    expect(await count(accountId)).toBe(0);
    await create(auth, { fileType: "xlsx", splitFiles: true, splitMode: "max_rows", maxRowsPerFile: 20000 });
    // Not used by equal_parts: stored as null, so no XLSX problem at save time.
    await create(auth, {
      fileType: "xlsx",
      splitFiles: true,
      splitMode: "equal_parts",
      numberOfParts: 2,
      maxRowsPerFile: 50000,
    });
    await create(auth, { fileType: "csv", splitFiles: true, splitMode: "max_rows", maxRowsPerFile: 50000 });
  });

  it("accepts every lead field name and alias, in any case", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const created = await create(auth, {
      fieldMappings: [
        { sourceField: "emailTier6", exportName: "T6", type: "field" },
        { sourceField: "WCOMPANYNAME", exportName: "Name", type: "field" },
        { sourceField: "wEmailPrimary", exportName: "Email", type: "field" },
        { sourceField: "aiCategoryEstimation", exportName: "AI", type: "field" },
      ],
    });
    expect((created.fieldMappings as { sourceField: string }[]).map((m) => m.sourceField)).toEqual([
      "emailTier6",
      "WCOMPANYNAME",
      "wEmailPrimary",
      "aiCategoryEstimation",
    ]);
  });

  it("needs a valid key and a paid plan", async () => {
    await t.request().post(BASE).send(formatBody()).expect(401);
    await t.request().post(BASE).set({ Authorization: "Bearer svck_nope" }).send(formatBody()).expect(401);
    const { accountId, auth } = await buildAccount(t.ctx.db, { status: "canceled" });
    await t.request().post(BASE).set(auth).send(formatBody()).expect(403);
    expect(await count(accountId)).toBe(0);
  });
});

describe("GET /export-formats", () => {
  it("lists the account's formats oldest first, never another account's", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const a = await create(auth, { name: "A" });
    const b = await create(auth, { name: "B" });
    await create(other.auth, { name: "Other" });
    const res = await t.request().get(BASE).set(auth).expect(200);
    expect(res.body.data.map((f: { id: number }) => f.id)).toEqual([a.id, b.id]);
    await t.request().get(`${BASE}/${a.id}`).set(other.auth).expect(404);
    const empty = await buildAccount(t.ctx.db);
    expect((await t.request().get(BASE).set(empty.auth).expect(200)).body.data).toEqual([]);
  });

  it("answers 404 for an unknown id, 401 and 403", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t.request().get(`${BASE}/999999`).set(auth).expect(404);
    expect(res.body.error).toBe("not_found");
    await t.request().get(BASE).expect(401);
    const canceled = await buildAccount(t.ctx.db, { status: "canceled" });
    await t.request().get(BASE).set(canceled.auth).expect(403);
    await t.request().get(`${BASE}/1`).set(canceled.auth).expect(403);
  });
});

describe("PATCH /export-formats/{id}", () => {
  it("changes only the fields sent and replaces fieldMappings", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const created = await create(auth, { startRow: 3, includeHeaders: false });
    const res = await t
      .request()
      .patch(`${BASE}/${created.id}`)
      .set(auth)
      .send({
        name: "Renamed",
        fieldMappings: [{ sourceField: "city", exportName: "City", type: "field" }],
        isDefault: true,
      })
      .expect(200);
    expect(res.body.data).toMatchObject({
      id: created.id,
      name: "Renamed",
      startRow: 3,
      includeHeaders: false,
      isDefault: false,
      fieldMappings: [{ sourceField: "city", exportName: "City", type: "field" }],
      createdAt: created.createdAt,
    });
    expect(Date.parse(res.body.data.updatedAt)).toBeGreaterThanOrEqual(
      Date.parse(created.updatedAt as string),
    );
  });

  it("checks the split rules on the merged result", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const created = await create(auth, { splitFiles: true, splitMode: "max_rows", maxRowsPerFile: 100 });
    // Switching mode without the value the new mode needs.
    const bad = await t
      .request()
      .patch(`${BASE}/${created.id}`)
      .set(auth)
      .send({ splitMode: "equal_parts" })
      .expect(400);
    expect(bad.body.error).toBe("validation_error");
    expect(bad.body.details[0].path).toEqual(["body", "numberOfParts"]);
    const nulled = await t
      .request()
      .patch(`${BASE}/${created.id}`)
      .set(auth)
      .send({ splitMode: null })
      .expect(400);
    expect(nulled.body.error).toBe("validation_error");
    // Unchanged after both refusals.
    const same = await t.request().get(`${BASE}/${created.id}`).set(auth).expect(200);
    expect(same.body.data).toMatchObject({
      splitMode: "max_rows",
      maxRowsPerFile: 100,
      updatedAt: created.updatedAt,
    });
    const ok = await t
      .request()
      .patch(`${BASE}/${created.id}`)
      .set(auth)
      .send({ splitMode: "parts_max_rows", numberOfParts: 4 })
      .expect(200);
    expect(ok.body.data).toMatchObject({
      splitMode: "parts_max_rows",
      maxRowsPerFile: 100,
      numberOfParts: 4,
    });
    const off = await t
      .request()
      .patch(`${BASE}/${created.id}`)
      .set(auth)
      .send({ splitFiles: false })
      .expect(200);
    expect(off.body.data).toMatchObject({
      splitFiles: false,
      splitMode: null,
      maxRowsPerFile: null,
      numberOfParts: null,
    });
  });

  it("answers export_too_large when the merged format is XLSX with maxRowsPerFile above 20,000", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const created = await create(auth, { splitFiles: true, splitMode: "max_rows", maxRowsPerFile: 50000 });
    const res = await t
      .request()
      .patch(`${BASE}/${created.id}`)
      .set(auth)
      .send({ fileType: "xlsx" })
      .expect(400);
    expect(res.body.error).toBe("export_too_large");
    const same = await t.request().get(`${BASE}/${created.id}`).set(auth).expect(200);
    expect(same.body.data.fileType).toBe("csv");
    await t
      .request()
      .patch(`${BASE}/${created.id}`)
      .set(auth)
      .send({ fileType: "xlsx", maxRowsPerFile: 20000 })
      .expect(200);
  });

  it("answers 400 bad_request without a writable field, 400 for bad values, 404 for another account", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const created = await create(auth);
    const none = await t
      .request()
      .patch(`${BASE}/${created.id}`)
      .set(auth)
      .send({ isDefault: true })
      .expect(400);
    expect(none.body.error).toBe("bad_request");
    const bad = await t.request().patch(`${BASE}/${created.id}`).set(auth).send({ startRow: 0 }).expect(400);
    expect(bad.body.error).toBe("validation_error");
    const unknown = await t
      .request()
      .patch(`${BASE}/${created.id}`)
      .set(auth)
      .send({ fieldMappings: [{ sourceField: "nope", exportName: "X", type: "field" }] })
      .expect(400);
    expect(unknown.body.details[0].path).toEqual(["body", "fieldMappings", "0", "sourceField"]);
    await t.request().patch(`${BASE}/${created.id}`).set(other.auth).send({ name: "Mine" }).expect(404);
    const same = await t.request().get(`${BASE}/${created.id}`).set(auth).expect(200);
    expect(same.body.data.name).toBe("My CSV");
    await t.request().patch(`${BASE}/${created.id}`).send({ name: "x" }).expect(401);
    const canceled = await buildAccount(t.ctx.db, { status: "canceled" });
    await t.request().patch(`${BASE}/${created.id}`).set(canceled.auth).send({ name: "x" }).expect(403);
  });
});

describe("set-default and DELETE", () => {
  it("moves the default flag atomically and is idempotent", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const a = await create(auth, { name: "A" });
    const b = await create(auth, { name: "B" });
    const first = await t.request().post(`${BASE}/${a.id}/set-default`).set(auth).expect(200);
    expect(first.body.data).toMatchObject({ id: a.id, isDefault: true });
    await t.request().post(`${BASE}/${a.id}/set-default`).set(auth).expect(200);
    await t.request().post(`${BASE}/${b.id}/set-default`).set(auth).expect(200);
    const list = await t.request().get(BASE).set(auth).expect(200);
    expect(list.body.data.map((f: { isDefault: boolean }) => f.isDefault)).toEqual([false, true]);
  });

  it("never leaves two defaults under concurrent calls", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const formats = await Promise.all([1, 2, 3, 4, 5].map((i) => create(auth, { name: `F${i}` })));
    const answers = await Promise.all(
      formats.map((f) => t.request().post(`${BASE}/${f.id}/set-default`).set(auth)),
    );
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const list = await t.request().get(BASE).set(auth).expect(200);
    expect(list.body.data.filter((f: { isDefault: boolean }) => f.isDefault)).toHaveLength(1);
  });

  it("set-default answers 404 for another account's format, 401 and 403", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const a = await create(auth);
    await t.request().post(`${BASE}/${a.id}/set-default`).set(other.auth).expect(404);
    await t.request().post(`${BASE}/999999/set-default`).set(auth).expect(404);
    expect((await t.request().get(`${BASE}/${a.id}`).set(auth).expect(200)).body.data.isDefault).toBe(false);
    await t.request().post(`${BASE}/${a.id}/set-default`).expect(401);
    const canceled = await buildAccount(t.ctx.db, { status: "canceled" });
    await t.request().post(`${BASE}/${a.id}/set-default`).set(canceled.auth).expect(403);
  });

  it("deletes a format (the default too), 404 afterwards and for another account", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const a = await create(auth);
    await t.request().post(`${BASE}/${a.id}/set-default`).set(auth).expect(200);
    await t.request().delete(`${BASE}/${a.id}`).set(other.auth).expect(404);
    expect(await count(accountId)).toBe(1);
    const res = await t.request().delete(`${BASE}/${a.id}`).set(auth).expect(200);
    expect(res.body.data.message).toEqual(expect.any(String));
    await t.request().get(`${BASE}/${a.id}`).set(auth).expect(404);
    await t.request().delete(`${BASE}/${a.id}`).set(auth).expect(404);
    expect(await count(accountId)).toBe(0);
    // The next one can become the default: the account had none left.
    const b = await create(auth);
    await t.request().post(`${BASE}/${b.id}/set-default`).set(auth).expect(200);
    await t.request().delete(`${BASE}/${b.id}`).expect(401);
    const canceled = await buildAccount(t.ctx.db, { status: "canceled" });
    await t.request().delete(`${BASE}/${b.id}`).set(canceled.auth).expect(403);
  });
});

describe("resolveExportFormat (used by exports)", () => {
  it("finds the named format, else the default, else none", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    expect(await resolveExportFormat(t.ctx.db, accountId, undefined)).toBeNull();
    const a = await create(auth, { name: "A" });
    const b = await create(auth, { name: "B" });
    expect(await resolveExportFormat(t.ctx.db, accountId, null)).toBeNull();
    await t.request().post(`${BASE}/${b.id}/set-default`).set(auth).expect(200);
    expect((await resolveExportFormat(t.ctx.db, accountId, undefined))?.id).toBe(b.id);
    expect((await resolveExportFormat(t.ctx.db, accountId, a.id))?.id).toBe(a.id);
    expect(await resolveExportFormat(t.ctx.db, other.accountId, a.id)).toBeUndefined();
  });
});
