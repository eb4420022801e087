import { sql } from "kysely";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { exportAnswerForm, prefersFile } from "../src/exports/answer-form.js";
import { composedBodyStream, keepLargeBody, storedFileText } from "../src/jobs/large-bodies.js";
import type { AnswerComposedBody } from "../src/jobs/answer.js";
import { useJobRunner, useTestApp } from "./helpers/app.js";
import { binary, buildFormat } from "./helpers/export-factories.js";
import { buildWordLeads, csvRecords, xlsxRecords } from "./helpers/export-job-factories.js";
import { buildAccount, buildKey } from "./helpers/factories.js";
import { uniqueWord } from "./helpers/leads-factories.js";

// The JSON answer of POST /leads/export (the real service's form) and how a request chooses it.
const t = useTestApp();
useJobRunner(t);

type Auth = { Authorization: string };
type AnswerFile = {
  fileName: string;
  fileType: string;
  data?: string;
  size: number;
  leadCount: number;
  exportId: number;
  exportHistoryId: number;
  downloadUrl: string;
  directDownloadUrl: string;
  expiresAt: string;
};

const today = () => new Date().toISOString().slice(0, 10);
const idsOf = (records: Record<string, unknown>[]) => records.map((r) => Number(r.id));
const newestFirst = (ids: number[]) => [...ids].reverse();

function post(auth: Auth, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return t.request().post("/api/v1/leads/export").set(auth).set(headers).send(body);
}

/** The file behind a JSON answer's keyed `downloadUrl`, as bytes. */
async function keyedFile(auth: Auth, file: AnswerFile): Promise<Buffer> {
  const res = await t.request().get(file.downloadUrl).set(auth).buffer(true).parse(binary).expect(200);
  return res.body as Buffer;
}

async function balanceOf(accountId: number): Promise<number> {
  const { rows } = await sql<{ tenths: string }>`
    select coalesce(sum(amount_tenths), 0) as tenths from credit_ledger where account_id = ${accountId}`.execute(
    t.ctx.db,
  );
  return Number(rows[0]!.tenths);
}

describe("Accept negotiation (unit)", () => {
  it("takes the JSON answer unless the most preferred known range is a file type", () => {
    expect(prefersFile(undefined)).toBe(false);
    expect(prefersFile("*/*")).toBe(false);
    expect(prefersFile("application/json, */*;q=0.5")).toBe(false);
    expect(prefersFile("text/html")).toBe(false);
    expect(prefersFile("text/csv")).toBe(true);
    expect(prefersFile("Application/ZIP")).toBe(true);
    expect(prefersFile("application/octet-stream")).toBe(true);
    expect(prefersFile("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")).toBe(true);
    expect(prefersFile("text/csv, application/json")).toBe(true);
    expect(prefersFile("application/json, text/csv")).toBe(false);
    expect(prefersFile("application/json;q=0.5, text/csv")).toBe(true);
    expect(prefersFile("text/csv;q=0, application/json")).toBe(false);
    expect(prefersFile("text/csv;q=0")).toBe(false);
    expect(prefersFile(["text/html", "text/csv;q=0.9"])).toBe(true);
    expect(exportAnswerForm(false, "text/csv")).toBe("links");
    expect(exportAnswerForm(true, "text/csv")).toBe("file");
    expect(exportAnswerForm(true, undefined)).toBe("json");
  });
});

describe("POST /leads/export: the JSON answer", () => {
  it("answers the files' contents as JSON when the client sends no Accept; charges and records as the file", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word, ids } = await buildWordLeads(t.ctx.db, 3);
    const before = await balanceOf(account.accountId);
    const res = await post(account.auth, { filters: { positiveKeywords: [word] }, maxCredits: 10 }).expect(
      200,
    );
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(res.headers["content-disposition"]).toBeUndefined();
    expect(res.headers["x-svc-job-id"]).toBeTruthy();
    const data = res.body.data as Record<string, unknown> & { files: AnswerFile[] };
    const history = await t.request().get("/api/v1/export-history").set(account.auth).expect(200);
    const entry = history.body.data[0];
    expect(data).toEqual({
      files: [
        {
          fileName: `leads-main-${today()}.csv`,
          fileType: "csv",
          data: expect.any(String),
          size: entry.fileSize,
          leadCount: 3,
          exportId: entry.id,
          exportHistoryId: entry.id,
          downloadUrl: `/api/v1/export-history/${entry.id}/download`,
          directDownloadUrl: expect.stringMatching(/\/api\/v1\/files\//),
          expiresAt: expect.any(String),
        },
      ],
      leadCount: 3,
      exportId: entry.id,
      databaseType: "other",
      creditsUsed: 3,
      creditsRemaining: expect.any(Number),
      maxCredits: 10,
    });
    const [file] = data.files;
    // `data` is the file's text, byte for byte what the download serves; `size` its bytes.
    const stored = await keyedFile(account.auth, file!);
    expect(file!.data).toBe(stored.toString("utf8"));
    expect(Buffer.byteLength(file!.data!)).toBe(file!.size);
    expect(idsOf(csvRecords(stored))).toEqual(newestFirst(ids));
    expect(before - (await balanceOf(account.accountId))).toBe(30);
    const me = await t.request().get("/api/v1/me").set(account.auth).expect(200);
    expect(data.creditsRemaining).toBe(me.body.data.totalCreditsRemaining);
    expect(entry.filters).toMatchObject({ positiveKeywords: [word] });
  });

  it("gives XLSX as base64, a JSON file as its text, and every part of a split export", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word, ids } = await buildWordLeads(t.ctx.db, 5);
    const xlsx = await post(account.auth, { filters: { positiveKeywords: [word] }, fileType: "xlsx" }).expect(
      200,
    );
    const [book] = xlsx.body.data.files as AnswerFile[];
    expect(book!.fileType).toBe("xlsx");
    const bytes = Buffer.from(book!.data!, "base64");
    expect(bytes.length).toBe(book!.size);
    expect(bytes.equals(await keyedFile(account.auth, book!))).toBe(true);
    expect((await xlsxRecords(bytes)).map((r) => r.id)).toEqual(newestFirst(ids));

    const json = await post(account.auth, { filters: { positiveKeywords: [word] }, fileType: "json" }).expect(
      200,
    );
    const [rows] = json.body.data.files as AnswerFile[];
    expect((JSON.parse(rows!.data!) as { id: number }[]).map((r) => r.id)).toEqual(newestFirst(ids));

    const format = await buildFormat(t.ctx.db, account.accountId, {
      name: "Split",
      fileType: "csv",
      splitFiles: true,
      splitMode: "max_rows",
      maxRowsPerFile: 2,
      includeTotal: true,
    });
    const split = await post(account.auth, {
      filters: { positiveKeywords: [word] },
      formatId: format.id,
    }).expect(200);
    const files = split.body.data.files as AnswerFile[];
    const base = `leads-main-${today()}`;
    expect(files.map((f) => [f.fileName, f.leadCount])).toEqual([
      [`${base}_part1.csv`, 2],
      [`${base}_part2.csv`, 2],
      [`${base}_part3.csv`, 1],
      [`${base}_total.csv`, 5],
    ]);
    expect(split.body.data.exportId).toBe(files[0]!.exportId);
    for (const file of files) expect(file.data).toBe((await keyedFile(account.auth, file)).toString("utf8"));
    // No ZIP was written for a JSON answer.
    const zips = await t.ctx.db
      .selectFrom("export_history")
      .select("storage_key")
      .where("account_id", "=", account.accountId)
      .execute();
    for (const { storage_key } of zips) {
      const zip = storage_key.replace(/[^/]+$/, `${base}.zip`);
      expect(await t.ctx.storage.size(zip)).toBeUndefined();
    }
  });

  it("negotiates by Accept: JSON for */* and application/json first, the file for a file type first", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word } = await buildWordLeads(t.ctx.db, 2);
    const body = { filters: { positiveKeywords: [word] } };
    // Exports are limited to 5 a minute per key: a key per request.
    const key = async () => (await buildKey(t.ctx.db, account.accountId)).auth;
    for (const accept of ["*/*", "application/json", "application/json, */*;q=0.5", "text/html"]) {
      const res = await post(await key(), body, { Accept: accept }).expect(200);
      expect(res.headers["content-type"], accept).toMatch(/^application\/json/);
      expect(res.body.data.files[0].data, accept).toContain("companyName");
    }
    for (const accept of [
      "text/csv",
      "application/zip",
      "text/csv, application/json",
      "application/json;q=0.1, text/csv",
    ]) {
      const res = await post(await key(), body, { Accept: accept })
        .buffer(true)
        .parse(binary)
        .expect(200);
      expect(res.headers["content-type"], accept).toMatch(/^text\/csv/);
      expect(res.headers["content-disposition"], accept).toContain(`leads-main-${today()}.csv`);
    }
  });

  it("answers 202 under respond-async and the same JSON answer on every poll", async () => {
    const account = await buildAccount(t.ctx.db);
    const second = await buildKey(t.ctx.db, account.accountId);
    const { word } = await buildWordLeads(t.ctx.db, 2);
    const accepted = await post(
      account.auth,
      { filters: { positiveKeywords: [word] }, maxLeads: 1 },
      { Prefer: "respond-async", Accept: "application/json" },
    ).expect(202);
    const poll = `/api/v1/jobs/${accepted.body.jobId as string}`;
    // A poll answers the stored answer, whatever its own Accept says.
    const first = await t
      .request()
      .get(poll)
      .set(account.auth)
      .set("Prefer", "wait=20")
      .set("Accept", "text/csv");
    expect(first.status).toBe(200);
    expect(first.headers["content-type"]).toMatch(/^application\/json/);
    expect(first.headers["x-svc-job-status"]).toBe("completed");
    expect(first.body.data).toMatchObject({ leadCount: 1, maxLeads: 1, overflowCount: 1 });
    expect(first.body.data.files[0].data).toContain(`${word} Company 1`);
    const again = await t.request().get(poll).set(second.auth).expect(200);
    expect(again.body).toEqual(first.body);
    const other = await buildAccount(t.ctx.db);
    await t.request().get(poll).set(other.auth).expect(404);
  });

  it("streams a large answer from its stored file, every character escaped as JSON", async () => {
    const account = await buildAccount(t.ctx.db, { plan: "platinum" });
    const word = uniqueWord("big");
    // About 2,000 leads: the CSV is well past the 256 KB a stored answer keeps in the jobs table.
    await sql`
      insert into leads (external_id, company_name, description, last_updated, last_buying_signal)
      select ${word} || '-' || g,
        ${word} || ' "Quoted", Co ' || g,
        'Line one' || chr(10) || 'tab' || chr(9) || 'back\\slash ünïcödé 😀 ' || repeat('x', 100),
        now(), now()
      from generate_series(1, 2000) g`.execute(t.ctx.db);
    const res = await post(account.auth, { filters: { positiveKeywords: [word] } }).expect(200);
    const jobId = res.headers["x-svc-job-id"] as string;
    const job = await t.ctx.db
      .selectFrom("jobs")
      .select("answer")
      .where("id", "=", jobId)
      .executeTakeFirstOrThrow();
    // Kept as the text around the stored file, which is streamed into the answer when served.
    expect(job.answer).toHaveProperty("composedBody");
    expect(JSON.stringify(job.answer).length).toBeLessThan(10_000);
    const [file] = res.body.data.files as AnswerFile[];
    const stored = await keyedFile(account.auth, file!);
    expect(stored.length).toBeGreaterThan(256 * 1024);
    expect(file!.data).toBe(stored.toString("utf8"));
    const records = csvRecords(stored);
    expect(records).toHaveLength(2000);
    expect(records[0]!.description).toContain("ünïcödé 😀");
    expect(res.body.data.leadCount).toBe(2000);
  }, 60_000);

  it("treats the answer form as part of the request: a key replayed with the other form is 409", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word } = await buildWordLeads(t.ctx.db, 1);
    const key = { "Idempotency-Key": `json-${uniqueWord()}` };
    const body = { filters: { positiveKeywords: [word] } };
    const first = await post(account.auth, body, key).expect(200);
    const replay = await post(account.auth, body, { ...key, Accept: "*/*" }).expect(200);
    expect(replay.headers["x-svc-job-id"]).toBe(first.headers["x-svc-job-id"]);
    expect(replay.body).toEqual(first.body);
    const other = await post(account.auth, body, { ...key, Accept: "text/csv" }).expect(409);
    expect(other.body.error).toBe("idempotency_key_reused");
  });
});

describe("keepLargeBody with stored file texts", () => {
  it("reads small files into the body and composes large ones, escaping every byte as JSON.stringify", async () => {
    const text = 'a,"b"\r\n\\ ünï 😀\u0001\u001f\u007f end';
    const bytes = Buffer.from(text);
    const binaryBytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 37) % 256));
    await t.ctx.storage.put("tests/large-bodies/a.csv", bytes);
    await t.ctx.storage.put("tests/large-bodies/b.xlsx", binaryBytes);
    const body = {
      data: {
        files: [
          { data: storedFileText("tests/large-bodies/a.csv", bytes.length, "text") },
          { data: storedFileText("tests/large-bodies/b.xlsx", binaryBytes.length, "base64") },
        ],
        n: 1,
      },
    };
    const expected = {
      data: { files: [{ data: text }, { data: binaryBytes.toString("base64") }], n: 1 },
    };
    // Storing it anywhere else is refused: the placeholder is never written as a value.
    expect(() => JSON.stringify(body)).toThrow();

    const small = await keepLargeBody(t.ctx.storage, { id: "job_small", attempt: 1 }, { status: 200, body });
    expect(small).toEqual({ status: 200, body: expected });

    // A tiny limit: the body is kept as the text around the files, which are never read now.
    const large = await keepLargeBody(
      t.ctx.storage,
      { id: "job_large", attempt: 2 },
      { status: 200, body },
      64,
    );
    expect(large).toEqual({
      status: 200,
      headers: {},
      composedBody: {
        segments: ['{"data":{"files":[{"data":', '},{"data":', '}],"n":1}}'],
        texts: [
          { storageKey: "tests/large-bodies/a.csv", size: bytes.length, encoding: "text" },
          { storageKey: "tests/large-bodies/b.xlsx", size: binaryBytes.length, encoding: "base64" },
        ],
      },
    });
    // Served: the files streamed into it (here in chunks of 7 bytes), escaped as JSON.stringify does.
    const chunked = {
      ...t.ctx.storage,
      open: async (key: string) => {
        const stored = await t.ctx.storage.open(key);
        if (!stored) return undefined;
        const all: Buffer[] = [];
        for await (const c of stored.body) all.push(c as Buffer);
        const whole = Buffer.concat(all);
        const out = new PassThrough();
        for (let i = 0; i < whole.length; i += 7) out.write(whole.subarray(i, i + 7));
        out.end();
        return { size: whole.length, body: out };
      },
    };
    const composed = (large as { composedBody: AnswerComposedBody }).composedBody;
    const served = await composedBodyStream(chunked, composed);
    const parts: Buffer[] = [];
    for await (const c of served!) parts.push(c as Buffer);
    const written = Buffer.concat(parts).toString("utf8");
    expect(written).toBe(JSON.stringify(expected));
    // Once a file is gone the answer is expired: nothing is sent.
    await t.ctx.storage.delete("tests/large-bodies/b.xlsx");
    expect(await composedBodyStream(t.ctx.storage, composed)).toBeUndefined();
  });
});
