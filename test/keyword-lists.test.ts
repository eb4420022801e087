import { describe, expect, it } from "vitest";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { expectKeyAndPlanRequired } from "./helpers/lead-records-factories.js";

const t = useTestApp();

const validList = { name: "Trades", type: "positive", keywords: ["plumb", "roof"] };

async function listsOf(auth: { Authorization: string }) {
  const res = await t.request().get("/api/v1/keyword-lists").set(auth).expect(200);
  return res.body.data as { id: number; name: string; keywords: string[] }[];
}

async function createList(auth: { Authorization: string }, body: object = validList) {
  const res = await t.request().post("/api/v1/keyword-lists").set(auth).send(body).expect(201);
  return res.body.data as { id: number; name: string };
}

describe("POST /keyword-lists", () => {
  it("creates a list: name and items trimmed, empty and repeated keywords dropped, extra input ignored", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .post("/api/v1/keyword-lists")
      .set(auth)
      .send({
        name: "  HVAC words  ",
        type: "negative",
        keywords: [" hvac ", "", "Duct", "duct", "   ", "hvac"],
        sourceCategories: [" Heating ", ""],
        id: 999,
        createdAt: "2000-01-01T00:00:00Z",
        color: "red",
      })
      .expect(201);
    expect(res.body.data).toEqual({
      id: expect.any(Number),
      name: "HVAC words",
      type: "negative",
      keywords: ["hvac", "Duct"],
      sourceCategories: ["Heating"],
      createdAt: expect.any(String),
      autoRefineEnabled: false,
      refinementStatus: null,
      scoresPerRound: [],
      pairedListId: null,
    });
    expect(res.body.data.id).not.toBe(999);
    expect(Date.now() - Date.parse(res.body.data.createdAt)).toBeLessThan(60_000);
  });

  it("stores sourceCategories as null when absent or null", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    expect((await createList(auth)) as unknown).toMatchObject({ sourceCategories: null });
    expect((await createList(auth, { ...validList, sourceCategories: null })) as unknown).toMatchObject({
      sourceCategories: null,
    });
  });

  it("accepts a name of 255 characters and refuses 256", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    await createList(auth, { ...validList, name: "n".repeat(255) });
    const res = await t
      .request()
      .post("/api/v1/keyword-lists")
      .set(auth)
      .send({ ...validList, name: "n".repeat(256) })
      .expect(400);
    expect(res.body.error).toBe("validation_error");
    expect(await listsOf(auth)).toHaveLength(1);
  });

  it.each([
    ["a missing name", { type: "positive", keywords: ["a"] }, ["body", "name"]],
    ["a blank name", { ...validList, name: "   " }, ["body", "name"]],
    ["an empty name", { ...validList, name: "" }, ["body", "name"]],
    ["a missing type", { name: "x", keywords: ["a"] }, ["body", "type"]],
    ["an unknown type", { ...validList, type: "neutral" }, ["body", "type"]],
    ["missing keywords", { name: "x", type: "positive" }, ["body", "keywords"]],
    ["an empty keyword array", { ...validList, keywords: [] }, ["body", "keywords"]],
    ["only blank keywords", { ...validList, keywords: ["", "  "] }, ["body", "keywords"]],
    ["a keyword that is not a string", { ...validList, keywords: ["a", 3] }, ["body", "keywords", "1"]],
    ["keywords as a string", { ...validList, keywords: "plumb" }, ["body", "keywords"]],
    ["sourceCategories not an array", { ...validList, sourceCategories: "x" }, ["body", "sourceCategories"]],
  ])("refuses %s with 400 validation_error and details, storing nothing", async (_label, body, path) => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t.request().post("/api/v1/keyword-lists").set(auth).send(body).expect(400);
    expect(res.body.error).toBe("validation_error");
    expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    expect(await listsOf(auth)).toEqual([]);
  });

  it("refuses a body that is not JSON", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t
      .request()
      .post("/api/v1/keyword-lists")
      .set({ ...auth, "Content-Type": "application/json" })
      .send("{nope")
      .expect(400);
    expect(res.body.error).toBe("validation_error");
    expect(await listsOf(auth)).toEqual([]);
  });
});

describe("GET /keyword-lists", () => {
  it("lists the account's lists, newest first, and only its own", async () => {
    const owner = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const first = await createList(owner.auth, { ...validList, name: "first" });
    const second = await createList(owner.auth, { ...validList, name: "second" });
    await createList(other.auth, { ...validList, name: "not yours" });
    const lists = await listsOf(owner.auth);
    expect(lists.map((l) => l.id)).toEqual([second.id, first.id]);
    expect((await listsOf(other.auth)).map((l) => l.name)).toEqual(["not yours"]);
  });

  it("answers an empty list for a new account", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    expect(await listsOf(auth)).toEqual([]);
  });
});

describe("PUT /keyword-lists/{id}", () => {
  it("with name, type and keywords replaces every field; an absent sourceCategories becomes null", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const created = await createList(auth, { ...validList, sourceCategories: ["Plumbing"] });
    const res = await t
      .request()
      .put(`/api/v1/keyword-lists/${created.id}`)
      .set(auth)
      .send({ name: " Renamed ", type: "negative", keywords: ["spam", " spam "] })
      .expect(200);
    expect(res.body.data).toMatchObject({
      id: created.id,
      name: "Renamed",
      type: "negative",
      keywords: ["spam"],
      sourceCategories: null,
      createdAt: (created as unknown as { createdAt: string }).createdAt,
    });
    expect(await listsOf(auth)).toEqual([res.body.data]);
  });

  it.each([
    ["only keywords", { keywords: [" duct ", "Duct", "vent"] }, { keywords: ["duct", "vent"] }],
    ["only the name", { name: "  Renamed  " }, { name: "Renamed" }],
    ["only the type", { type: "negative" }, { type: "negative" }],
    ["sourceCategories null", { sourceCategories: null }, { sourceCategories: null }],
    ["sourceCategories", { sourceCategories: [" HVAC ", ""] }, { sourceCategories: ["HVAC"] }],
    [
      "name and keywords",
      { name: "Both", keywords: ["a"], color: "ignored" },
      { name: "Both", keywords: ["a"] },
    ],
  ])("changes only the fields sent: %s", async (_label, body, changed) => {
    const { auth } = await buildAccount(t.ctx.db);
    const created = await createList(auth, { ...validList, sourceCategories: ["Plumbing"] });
    const res = await t.request().put(`/api/v1/keyword-lists/${created.id}`).set(auth).send(body).expect(200);
    const expected = {
      ...created,
      name: "Trades",
      type: "positive",
      keywords: ["plumb", "roof"],
      sourceCategories: ["Plumbing"],
      ...changed,
    };
    expect(res.body.data).toEqual(expected);
    expect(await listsOf(auth)).toEqual([expected]);
  });

  it("refuses bad input with 400 and leaves the list unchanged", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const created = await createList(auth);
    for (const [body, path] of [
      [{ name: "x", type: "positive", keywords: [] }, ["body", "keywords"]],
      [{ name: "x", type: "positive", keywords: ["  "] }, ["body", "keywords"]],
      [{ keywords: ["  "] }, ["body", "keywords"]],
      [{ ...validList, name: " " }, ["body", "name"]],
      [{ name: "n".repeat(256) }, ["body", "name"]],
      [{ type: "neutral" }, ["body", "type"]],
      [{ keywords: "plumb" }, ["body", "keywords"]],
      [{}, ["body"]],
      [{ color: "red", id: 5 }, ["body"]],
    ] as const) {
      const res = await t
        .request()
        .put(`/api/v1/keyword-lists/${created.id}`)
        .set(auth)
        .send(body)
        .expect(400);
      expect(res.body.error).toBe("validation_error");
      expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    }
    expect((await listsOf(auth))[0]).toMatchObject({ name: "Trades", keywords: ["plumb", "roof"] });
  });

  it("answers 404 for an unknown id and for another account's list, which stays unchanged", async () => {
    const owner = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const created = await createList(owner.auth);
    for (const id of [created.id, 2_000_000_000]) {
      const res = await t
        .request()
        .put(`/api/v1/keyword-lists/${id}`)
        .set(other.auth)
        .send(validList)
        .expect(404);
      expect(res.body.error).toBe("not_found");
    }
    const res = await t
      .request()
      .put(`/api/v1/keyword-lists/${created.id}`)
      .set(other.auth)
      .send({ ...validList, name: "stolen" })
      .expect(404);
    expect(res.body.error).toBe("not_found");
    expect((await listsOf(owner.auth))[0]?.name).toBe("Trades");
  });

  it("refuses an id that is not an integer with 400", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const res = await t.request().put("/api/v1/keyword-lists/abc").set(auth).send(validList).expect(400);
    expect(res.body.error).toBe("validation_error");
  });
});

describe("pairedListId", () => {
  it("pairs a list with one of the other type on create and on PUT, both ways, and unpairs with null", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const negative = await createList(auth, { name: "Out", type: "negative", keywords: ["jobs"] });
    const positive = (await createList(auth, { ...validList, pairedListId: negative.id })) as unknown as {
      id: number;
      pairedListId: number | null;
    };
    expect(positive.pairedListId).toBe(negative.id);
    const byId = async () =>
      new Map(
        ((await listsOf(auth)) as unknown as { id: number; pairedListId: number | null }[]).map((l) => [
          l.id,
          l.pairedListId,
        ]),
      );
    expect((await byId()).get(negative.id)).toBe(positive.id);

    // Re-pairing the negative list with another positive one unpairs the first.
    const other = await createList(auth, { ...validList, name: "Other" });
    await t
      .request()
      .put(`/api/v1/keyword-lists/${negative.id}`)
      .set(auth)
      .send({ pairedListId: other.id })
      .expect(200);
    let pairs = await byId();
    expect([pairs.get(negative.id), pairs.get(other.id), pairs.get(positive.id)]).toEqual([
      other.id,
      negative.id,
      null,
    ]);

    // A type change that leaves two lists of one type paired breaks the pair.
    await t
      .request()
      .put(`/api/v1/keyword-lists/${other.id}`)
      .set(auth)
      .send({ type: "negative" })
      .expect(200);
    pairs = await byId();
    expect([pairs.get(negative.id), pairs.get(other.id)]).toEqual([null, null]);

    await t
      .request()
      .put(`/api/v1/keyword-lists/${positive.id}`)
      .set(auth)
      .send({ pairedListId: negative.id })
      .expect(200);
    await t
      .request()
      .put(`/api/v1/keyword-lists/${negative.id}`)
      .set(auth)
      .send({ pairedListId: null })
      .expect(200);
    pairs = await byId();
    expect([pairs.get(negative.id), pairs.get(positive.id)]).toEqual([null, null]);

    // Deleting a list leaves its partner without a pair (the partner is not deleted).
    await t
      .request()
      .put(`/api/v1/keyword-lists/${positive.id}`)
      .set(auth)
      .send({ pairedListId: negative.id })
      .expect(200);
    await t.request().delete(`/api/v1/keyword-lists/${negative.id}`).set(auth).expect(200);
    expect((await byId()).get(positive.id)).toBeNull();
  });

  it("refuses a list of the same type, the list itself and another account's list, changing nothing", async () => {
    const owner = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const positive = await createList(owner.auth);
    const samePositive = await createList(owner.auth, { ...validList, name: "Same" });
    const theirs = await createList(other.auth, { name: "Theirs", type: "negative", keywords: ["x"] });
    for (const pairedListId of [samePositive.id, positive.id, theirs.id, 999_999]) {
      const res = await t
        .request()
        .put(`/api/v1/keyword-lists/${positive.id}`)
        .set(owner.auth)
        .send({ pairedListId })
        .expect(400);
      expect(res.body).toMatchObject({
        error: "validation_error",
        details: [{ path: ["body", "pairedListId"] }],
      });
    }
    const created = await t
      .request()
      .post("/api/v1/keyword-lists")
      .set(owner.auth)
      .send({ name: "N", type: "negative", keywords: ["x"], pairedListId: theirs.id })
      .expect(400);
    expect(created.body.error).toBe("validation_error");
    expect((await listsOf(owner.auth)).map((l) => l.name).sort()).toEqual(["Same", "Trades"]);
    expect(
      (await listsOf(other.auth)).map((l) => (l as unknown as { pairedListId: null }).pairedListId),
    ).toEqual([null]);
    await t
      .request()
      .put(`/api/v1/keyword-lists/${positive.id}`)
      .set(owner.auth)
      .send({ pairedListId: "abc" })
      .expect(400);
  });
});

describe("DELETE /keyword-lists/{id}", () => {
  it("deletes the list", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const keep = await createList(auth, { ...validList, name: "keep" });
    const gone = await createList(auth, { ...validList, name: "gone" });
    const res = await t.request().delete(`/api/v1/keyword-lists/${gone.id}`).set(auth).expect(200);
    expect(res.body.data.message).toEqual(expect.any(String));
    expect((await listsOf(auth)).map((l) => l.id)).toEqual([keep.id]);
    await t.request().delete(`/api/v1/keyword-lists/${gone.id}`).set(auth).expect(404);
  });

  it("answers 404 for another account's list and keeps it", async () => {
    const owner = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const created = await createList(owner.auth);
    const res = await t.request().delete(`/api/v1/keyword-lists/${created.id}`).set(other.auth).expect(404);
    expect(res.body.error).toBe("not_found");
    expect(await listsOf(owner.auth)).toHaveLength(1);
  });
});

describe("keys and plans", () => {
  it("needs a valid, unrevoked key of an account with a paid plan", async () => {
    const owner = await buildAccount(t.ctx.db);
    const created = await createList(owner.auth);
    await expectKeyAndPlanRequired(t, [
      { method: "get", path: "/api/v1/keyword-lists" },
      { method: "post", path: "/api/v1/keyword-lists", body: validList },
      { method: "put", path: `/api/v1/keyword-lists/${created.id}`, body: validList },
      { method: "delete", path: `/api/v1/keyword-lists/${created.id}` },
    ]);
    expect(await listsOf(owner.auth)).toEqual([expect.objectContaining({ id: created.id, name: "Trades" })]);
  });
});
