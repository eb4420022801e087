import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { useJobRunner, useTestApp } from "./helpers/app.js";
import { binary } from "./helpers/export-factories.js";
import { buildWordLeads, csvRecords } from "./helpers/export-job-factories.js";
import { buildAccount, buildKey } from "./helpers/factories.js";
import { expectKeyAndPlanRequired } from "./helpers/lead-records-factories.js";
import { markReceived } from "./helpers/leads-factories.js";

// The export and download-link calls of the real service's client (Tomsonx232/smb-sales-boost-skill:
// SKILL.md, REFERENCE.md sections 4 and 5) as its `smb_api.py` sends them: `Accept: application/json,
// */*;q=0.5`, a JSON body with the search parameters in `filters` and the cost controls at the top
// level, the JSON answer's `files[].data` saved, `downloadUrl` fetched with the key, and
// `GET /export-history/{id}/download-url` followed without it.
const t = useTestApp({ publicBaseUrl: "https://leads.example.test" });
useJobRunner(t);

type Auth = { Authorization: string };
type AnswerFile = {
  fileName: string;
  fileType: string;
  data?: string;
  downloadUrl: string;
  exportId: number;
};

/** The headers smb_api.py sends on every call. */
const CLIENT_HEADERS = { Accept: "application/json, */*;q=0.5", "User-Agent": "smb-sales-boost-skill/1.9.3" };

function exportAs(auth: Auth, body: unknown, path = "/api/v1/leads/export") {
  return t
    .request()
    .post(path)
    .set(auth)
    .set(CLIENT_HEADERS)
    .set("Content-Type", "application/json")
    .send(JSON.stringify(body));
}

/** Tenths of credits the account holds (grants minus charges). */
async function ledgerTenths(accountId: number): Promise<number> {
  const { rows } = await sql<{ tenths: string }>`
    select coalesce(sum(amount_tenths), 0) as tenths from credit_ledger where account_id = ${accountId}`.execute(
    t.ctx.db,
  );
  return Number(rows[0]!.tenths);
}

async function jobCount(accountId: number): Promise<number> {
  const rows = await t.ctx.db.selectFrom("jobs").select("id").where("account_id", "=", accountId).execute();
  return rows.length;
}

/** The lead ids of an answer's CSV file (what smb_api.py writes to disk from `data`). */
const idsInFile = (file: AnswerFile) => csvRecords(Buffer.from(file.data!, "utf8")).map((r) => Number(r.id));
const newestFirst = (ids: number[]) => [...ids].reverse();

describe("POST /leads/export as the real service's client sends it", () => {
  it("REFERENCE.md: filters nested, maxCredits at the top level; the JSON answer's files are saved from data", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word, ids } = await buildWordLeads(t.ctx.db, 4, (i) => ({ state: i === 0 ? "GA" : "FL" }));
    const before = await ledgerTenths(account.accountId);
    const res = await exportAs(account.auth, {
      filters: { positiveKeywords: [word], stateInclude: ["FL"] },
      maxCredits: 100,
    }).expect(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    const data = res.body.data;
    expect(data).toMatchObject({ leadCount: 3, databaseType: "other", creditsUsed: 3, maxCredits: 100 });
    expect(typeof data.exportId).toBe("number");
    expect(typeof data.creditsRemaining).toBe("number");
    const [file] = data.files as AnswerFile[];
    expect(file!.fileType).toBe("csv");
    expect(idsInFile(file!)).toEqual(newestFirst(ids.slice(1)));
    expect(before - (await ledgerTenths(account.accountId))).toBe(30);
    // "Download this file again with GET /export-history/{exportId}/download".
    const again = await t
      .request()
      .get(`/api/v1/export-history/${data.exportId as number}/download`)
      .set(account.auth)
      .set(CLIENT_HEADERS)
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect((again.body as Buffer).toString("utf8")).toBe(file!.data);
  });

  it("SKILL.md: database beside filters, maxLeads and maxResults echoed with overflowCount", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word, ids } = await buildWordLeads(t.ctx.db, 5);
    const res = await exportAs(account.auth, {
      database: "other",
      filters: { positiveKeywords: [word] },
      maxLeads: 2,
      maxResults: 4,
      maxCredits: 10,
    }).expect(200);
    expect(res.body.data).toMatchObject({
      leadCount: 2,
      maxLeads: 2,
      overflowCount: 2,
      maxResults: 4,
      maxCredits: 10,
      creditsUsed: 2,
    });
    expect(idsInFile(res.body.data.files[0])).toEqual([ids[4], ids[3]]);
  });

  it("inline false (body or ?inline=false): files carry exportId and a keyed downloadUrl the client fetches", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word, ids } = await buildWordLeads(t.ctx.db, 2);
    for (const [path, body] of [
      ["/api/v1/leads/export", { filters: { positiveKeywords: [word] }, inline: false, maxCredits: 5 }],
      ["/api/v1/leads/export?inline=false", { filters: { positiveKeywords: [word] }, maxCredits: 5 }],
      [
        "/api/v1/leads/export?inline=false",
        { filters: { positiveKeywords: [word] }, inline: false, maxCredits: 5 },
      ],
    ] as const) {
      const res = await exportAs(account.auth, body, path).expect(200);
      const [file] = res.body.data.files as AnswerFile[];
      expect(file!.data, path).toBeUndefined();
      expect(file!.downloadUrl).toBe(`/api/v1/export-history/${file!.exportId}/download`);
      const download = await t
        .request()
        .get(file!.downloadUrl)
        .set(account.auth)
        .buffer(true)
        .parse(binary)
        .expect(200);
      expect(csvRecords(download.body as Buffer).map((r) => Number(r.id))).toEqual(newestFirst(ids));
    }
  });

  it("selectedIds: exactly those leads (duplicates merged, unknown and blacklisted left out), charged as new", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word, ids } = await buildWordLeads(t.ctx.db, 4);
    const other = await buildWordLeads(t.ctx.db, 1);
    await t
      .request()
      .post("/api/v1/export-blacklist")
      .set(account.auth)
      .send({ entries: [{ entryType: "domain", value: `${word}-2.example.org` }] })
      .expect(201);
    await markReceived(t.ctx.db, account.accountId, [ids[0]!]);
    const before = await ledgerTenths(account.accountId);
    const res = await exportAs(account.auth, {
      selectedIds: [ids[0], ids[2], ids[3], ids[3], 2_000_000_000],
      maxCredits: 10,
    }).expect(200);
    // Default order: last buying signal, newest first.
    expect(idsInFile(res.body.data.files[0])).toEqual([ids[3], ids[0]]);
    expect(res.body.data).toMatchObject({ leadCount: 2, creditsUsed: 1 });
    expect(before - (await ledgerTenths(account.accountId))).toBe(10);
    expect(idsInFile(res.body.data.files[0])).not.toContain(other.ids[0]);
    // Files of a selectedIds export carry no search filters.
    const list = await t.request().get("/api/v1/export-history?limit=1").set(account.auth).expect(200);
    expect(list.body.data[0].filters).toBeNull();
  });

  it("excludePurchased (top level or in filters) leaves out the leads the account has", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word, ids } = await buildWordLeads(t.ctx.db, 3);
    await markReceived(t.ctx.db, account.accountId, [ids[1]!]);
    const top = await exportAs(account.auth, {
      filters: { positiveKeywords: [word] },
      excludePurchased: true,
      maxCredits: 0,
    }).expect(200);
    // maxCredits 0 takes only received leads, excludePurchased none of them: an empty file, free.
    expect(top.body.data).toMatchObject({ leadCount: 0, creditsUsed: 0 });
    const inside = await exportAs(account.auth, {
      filters: { positiveKeywords: [word], excludePurchased: true },
      maxCredits: 5,
    }).expect(200);
    expect(idsInFile(inside.body.data.files[0])).toEqual([ids[2], ids[0]]);
  });

  it("maxCredits, maxResults inside filters cap the export (the real service ignores them there)", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word, ids } = await buildWordLeads(t.ctx.db, 4);
    await markReceived(t.ctx.db, account.accountId, [ids[0]!]);
    const before = await ledgerTenths(account.accountId);
    const free = await exportAs(account.auth, {
      filters: { positiveKeywords: [word], maxCredits: 0 },
    }).expect(200);
    expect(idsInFile(free.body.data.files[0])).toEqual([ids[0]]);
    expect(free.body.data.maxCredits).toBe(0);
    const capped = await exportAs(account.auth, {
      filters: { positiveKeywords: [word], maxResults: 2, maxCredits: 1 },
      maxCredits: 1,
    }).expect(200);
    expect(idsInFile(capped.body.data.files[0])).toEqual([ids[3], ids[0]]);
    expect(before - (await ledgerTenths(account.accountId))).toBe(10);
  });

  it("the earlier flat form still works, and maxCredits null is no cap", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word, ids } = await buildWordLeads(t.ctx.db, 3);
    const res = await exportAs(account.auth, { positiveKeywords: [word], maxCredits: null }).expect(200);
    expect(idsInFile(res.body.data.files[0])).toEqual(newestFirst(ids));
    expect(res.body.data).not.toHaveProperty("maxCredits");
    expect(res.body.data.creditsUsed).toBe(3);
    const list = await t.request().get("/api/v1/export-history?limit=1").set(account.auth).expect(200);
    expect(list.body.data[0].filters).toMatchObject({ positiveKeywords: [word] });
  });

  it("refuses each malformed body with 400 validation_error and details; nothing is charged or started", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word } = await buildWordLeads(t.ctx.db, 2);
    const before = await ledgerTenths(account.accountId);
    const cases: [unknown, string[], string?][] = [
      [{ filters: { positiveKeywords: [word] }, stateInclude: ["TX"] }, ["body", "stateInclude"]],
      [{ filters: { positiveKeywords: [word] }, selectedIds: [1] }, ["body", "filters", "positiveKeywords"]],
      [{ positiveKeywords: [word], selectedIds: [1] }, ["body", "positiveKeywords"]],
      [
        { filters: { positiveKeywords: [word], maxCredits: 5 }, maxCredits: 6 },
        ["body", "filters", "maxCredits"],
      ],
      [
        { filters: { positiveKeywords: [word], maxCredits: 5 }, maxCredits: null },
        ["body", "filters", "maxCredits"],
      ],
      [{ filters: { positiveKeywords: [word], maxLeads: 5 } }, ["body", "filters", "maxLeads"]],
      [{ filters: { positiveKeywords: [word], inline: false } }, ["body", "filters", "inline"]],
      [{ filters: { stateInclude: ["TX"] } }, ["body", "filters", "positiveKeywords"]],
      [{ filters: {} }, ["body", "filters", "positiveKeywords"]],
      [{ maxCredits: 5 }, ["body", "positiveKeywords"]],
      [{ filters: { positiveKeywords: [word] }, inline: true }, ["query", "inline"], "?inline=false"],
      [{ filters: "positiveKeywords=x" }, ["body", "filters"]],
      [{ filters: { positiveKeywords: [word] }, selectedIds: [] }, ["body", "selectedIds"]],
      [{ selectedIds: [0] }, ["body", "selectedIds", "0"]],
      [{ selectedIds: ["12"] }, ["body", "selectedIds", "0"]],
      [{ filters: { positiveKeywords: [word] }, maxCredits: -1 }, ["body", "maxCredits"]],
      [{ filters: { positiveKeywords: [word] }, maxCredits: 1.5 }, ["body", "maxCredits"]],
      [{ filters: { positiveKeywords: [word] }, maxCredits: "5" }, ["body", "maxCredits"]],
      [{ filters: { positiveKeywords: [word] }, excludePurchased: "yes" }, ["body", "excludePurchased"]],
      [{ filters: { positiveKeywords: [word] }, maxLeads: 100_001 }, ["body", "maxLeads"]],
    ];
    // The rate limit (5 exports a minute per key) counts refused requests too: a key per request.
    for (const [body, path, query] of cases) {
      const key = await buildKey(t.ctx.db, account.accountId);
      const res = await exportAs(key.auth, body, `/api/v1/leads/export${query ?? ""}`);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toBe("validation_error");
      const paths = (res.body.details as { path: string[] }[]).map((d) => d.path.join("."));
      expect(paths, JSON.stringify(body)).toContain(path.join("."));
    }
    const tooMany = await buildKey(t.ctx.db, account.accountId);
    const ids = Array.from({ length: 100_001 }, (_, i) => i + 1);
    const big = await exportAs(tooMany.auth, { selectedIds: ids }).expect(400);
    expect(big.body.error).toBe("validation_error");
    expect(await ledgerTenths(account.accountId)).toBe(before);
    expect(await jobCount(account.accountId)).toBe(0);
  }, 60_000);

  it("needs a valid, unrevoked key of an account with a paid plan", async () => {
    await expectKeyAndPlanRequired(t, [
      { method: "post", path: "/api/v1/leads/export", body: { filters: { positiveKeywords: ["x"] } } },
      { method: "get", path: "/api/v1/export-history/1/download-url" },
    ]);
  });
});

describe("export history as the real service's client reads it", () => {
  it("download-url answers the link and the file's facts; the link works without Authorization", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word } = await buildWordLeads(t.ctx.db, 2);
    const res = await exportAs(account.auth, { filters: { positiveKeywords: [word] }, maxCredits: 5 }).expect(
      200,
    );
    const [file] = res.body.data.files as (AnswerFile & { size: number })[];
    const link = await t
      .request()
      .get(`/api/v1/export-history/${file!.exportId}/download-url`)
      .set(account.auth)
      .set(CLIENT_HEADERS)
      .expect(200);
    const entry = await t.ctx.db
      .selectFrom("export_history")
      .selectAll()
      .where("id", "=", file!.exportId)
      .executeTakeFirstOrThrow();
    expect(link.body.data).toEqual({
      downloadUrl: expect.stringMatching(/^https:\/\/leads\.example\.test\/api\/v1\/files\//),
      expiresInSeconds: 900,
      fileName: file!.fileName,
      fileType: "csv",
      fileSize: file!.size,
      leadCount: 2,
      fileExpiresAt: entry.expires_at.toISOString(),
      url: link.body.data.downloadUrl,
      expiresAt: expect.any(String),
    });
    const direct = await t
      .request()
      .get(new URL(link.body.data.downloadUrl as string).pathname)
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect((direct.body as Buffer).toString("utf8")).toBe(file!.data);
    // Another account reaches neither the file nor a link to it.
    const other = await buildAccount(t.ctx.db);
    await t.request().get(file!.downloadUrl).set(other.auth).expect(404);
    await t
      .request()
      .get(`/api/v1/export-history/${file!.exportId}/download-url`)
      .set(other.auth)
      .expect(404);
  });

  it("410 says why: reason expired, or not_stored for a file gone from storage", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word } = await buildWordLeads(t.ctx.db, 2);
    const first = await exportAs(account.auth, {
      filters: { positiveKeywords: [word] },
      maxCredits: 5,
    }).expect(200);
    const second = await exportAs(account.auth, {
      filters: { positiveKeywords: [word] },
      maxCredits: 5,
    }).expect(200);
    const expired = first.body.data.exportId as number;
    const gone = second.body.data.exportId as number;
    await t.ctx.db
      .updateTable("export_history")
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where("id", "=", expired)
      .execute();
    const goneEntry = await t.ctx.db
      .selectFrom("export_history")
      .select("storage_key")
      .where("id", "=", gone)
      .executeTakeFirstOrThrow();
    await t.ctx.storage.delete(goneEntry.storage_key);
    for (const suffix of ["download", "download-url"]) {
      const a = await t
        .request()
        .get(`/api/v1/export-history/${expired}/${suffix}`)
        .set(account.auth)
        .expect(410);
      expect(a.body).toMatchObject({ error: "file_unavailable", reason: "expired" });
      const b = await t
        .request()
        .get(`/api/v1/export-history/${gone}/${suffix}`)
        .set(account.auth)
        .expect(410);
      expect(b.body).toMatchObject({ error: "file_unavailable", reason: "not_stored" });
    }
  });

  it("lists entries with their filters; limit 0 answers only the count", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word } = await buildWordLeads(t.ctx.db, 1);
    await exportAs(account.auth, {
      filters: { positiveKeywords: [word], stateInclude: ["TX"] },
      maxCredits: 1,
    }).expect(200);
    const list = await t
      .request()
      .get("/api/v1/export-history")
      .set(account.auth)
      .set(CLIENT_HEADERS)
      .expect(200);
    const [entry] = list.body.data;
    for (const key of [
      "id",
      "fileName",
      "fileType",
      "leadCount",
      "fileSize",
      "formatName",
      "databaseType",
      "filters",
      "createdAt",
      "expiresAt",
      "downloadAvailable",
      "unavailableReason",
    ]) {
      expect(entry).toHaveProperty(key);
    }
    expect(entry.filters).toMatchObject({ positiveKeywords: [word], stateInclude: ["TX"] });
    const none = await t.request().get("/api/v1/export-history?limit=0").set(account.auth).expect(200);
    expect(none.body).toEqual({ data: [], totalCount: 1, limit: 0, offset: 0 });
  });
});
