import { sql } from "kysely";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { chargeCredits } from "../src/credits/ledger.js";
import { sweepJobs } from "../src/jobs/tasks/jobs__sweep.js";
import { useJobRunner, useTestApp } from "./helpers/app.js";
import { holdChargeLock } from "./helpers/charge-lock.js";
import { binary, buildFormat, readZip } from "./helpers/export-factories.js";
import {
  buildWordLeads,
  csvRecords,
  startExportWorkerProcess,
  xlsxRecords,
} from "./helpers/export-job-factories.js";
import { buildAccount, buildKey } from "./helpers/factories.js";
import { startJobRunner } from "./helpers/jobs-factories.js";
import { holdLeadQuerySlots } from "./helpers/lead-query-slots.js";
import { buildLeads, markReceived, uniqueWord } from "./helpers/leads-factories.js";

const t = useTestApp();
const worker = useJobRunner(t);

type Auth = { Authorization: string };

/** POST /leads/export asking for the file itself (`Accept: text/csv`), kept as a Buffer. */
function exportFile(auth: Auth, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return t
    .request()
    .post("/api/v1/leads/export")
    .set(auth)
    .set({ Accept: "text/csv", ...headers })
    .send(body)
    .buffer(true)
    .parse(binary);
}

function exportJson(auth: Auth, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return t.request().post("/api/v1/leads/export").set(auth).set(headers).send(body);
}

async function creditsOf(auth: Auth): Promise<number> {
  const res = await t.request().get("/api/v1/me").set(auth).expect(200);
  return res.body.data.totalCreditsRemaining as number;
}

async function chargeRows(accountId: number) {
  return t.ctx.db
    .selectFrom("credit_ledger")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("kind", "=", "charge")
    .execute();
}

async function reservoirOf(accountId: number): Promise<number[]> {
  const rows = await t.ctx.db
    .selectFrom("lead_reservoir")
    .select("lead_id")
    .where("account_id", "=", accountId)
    .orderBy("lead_id")
    .execute();
  return rows.map((r) => r.lead_id);
}

/** The account's background jobs (ids). */
async function jobsOf(accountId: number) {
  return t.ctx.db.selectFrom("jobs").select("id").where("account_id", "=", accountId).execute();
}

const idsOf = (records: Record<string, unknown>[]) => records.map((r) => Number(r.id));
const today = () => new Date().toISOString().slice(0, 10);
/** The leads in the default order (last update, descending): the last built first. */
const newestFirst = (ids: number[]) => [...ids].reverse();

describe("POST /leads/export: files", () => {
  it("answers a CSV file, charges 1 credit per new lead and records them; a second export is free", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word, ids } = await buildWordLeads(t.ctx.db, 5);
    const before = await creditsOf(account.auth);

    const res = await exportFile(account.auth, { positiveKeywords: [word] }).expect(200);
    expect(res.headers["content-type"]).toMatch(/^text\/csv/);
    expect(res.headers["content-disposition"]).toContain(`filename="leads-main-${today()}.csv"`);
    expect(res.headers["x-svc-job-id"]).toBeTruthy();
    expect(res.headers["cache-control"]).toBe("no-store");
    expect(res.headers["x-credits-capped"]).toBeUndefined();
    const records = csvRecords(res.body as Buffer);
    expect(idsOf(records)).toEqual(newestFirst(ids));
    expect(records[0]!.companyName).toBe(`${word} Company 4`);
    expect(await creditsOf(account.auth)).toBe(before - 5);

    const history = await t.ctx.db
      .selectFrom("lead_export_history")
      .selectAll()
      .where("account_id", "=", account.accountId)
      .execute();
    expect(history.map((h) => h.lead_id).sort((a, b) => a - b)).toEqual(ids);
    expect(history.every((h) => h.export_method === "api" && h.lead_version === 1)).toBe(true);
    const files = await t.request().get("/api/v1/export-history").set(account.auth).expect(200);
    expect(files.body.data).toHaveLength(1);
    expect(files.body.data[0]).toMatchObject({ leadCount: 5, fileType: "csv", exportMethod: "api" });

    // The sticky rule: the same leads again cost nothing.
    const again = await exportFile(account.auth, { positiveKeywords: [word] }).expect(200);
    expect(idsOf(csvRecords(again.body as Buffer))).toEqual(newestFirst(ids));
    expect(await creditsOf(account.auth)).toBe(before - 5);
    const charges = await chargeRows(account.accountId);
    expect(charges.reduce((s, r) => s - r.amount_tenths, 0)).toBe(50);
  });

  it("writes JSON and XLSX files (fileType overrides the format), read back with exceljs", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word, ids } = await buildWordLeads(t.ctx.db, 3);
    // `application/json` asks for the JSON answer: the JSON file itself is `application/octet-stream`.
    const json = await exportFile(
      account.auth,
      { positiveKeywords: [word], fileType: "json" },
      { Accept: "application/octet-stream" },
    ).expect(200);
    expect(json.headers["content-type"]).toMatch(/^application\/json/);
    expect(json.headers["content-disposition"]).toContain(`leads-main-${today()}.json`);
    const rows = JSON.parse((json.body as Buffer).toString("utf8")) as Record<string, unknown>[];
    expect(rows.map((r) => r.id)).toEqual(newestFirst(ids));

    const format = await buildFormat(t.ctx.db, account.accountId, { name: "Mine", fileType: "csv" });
    const xlsx = await exportFile(account.auth, {
      positiveKeywords: [word],
      formatId: format.id,
      fileType: "xlsx",
    }).expect(200);
    expect(xlsx.headers["content-type"]).toMatch(/spreadsheetml/);
    const sheet = await xlsxRecords(xlsx.body as Buffer);
    expect(sheet.map((r) => r.Company)).toEqual([
      `${word} Company 2`,
      `${word} Company 1`,
      `${word} Company 0`,
    ]);
  });

  it("answers a ZIP of the parts when the format splits the export", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word } = await buildWordLeads(t.ctx.db, 25);
    const format = await buildFormat(t.ctx.db, account.accountId, {
      name: "Split",
      fileType: "csv",
      splitFiles: true,
      splitMode: "max_rows",
      maxRowsPerFile: 10,
    });
    const res = await exportFile(account.auth, { positiveKeywords: [word], formatId: format.id }).expect(200);
    expect(res.headers["content-type"]).toMatch(/^application\/zip/);
    expect(res.headers["content-disposition"]).toContain(`leads-main-${today()}.zip`);
    const members = readZip(res.body as Buffer);
    const base = `leads-main-${today()}`;
    expect([...members.keys()]).toEqual([`${base}_part1.csv`, `${base}_part2.csv`, `${base}_part3.csv`]);
    expect(csvRecords(members.get(`${base}_part3.csv`)!)).toHaveLength(5);
  });

  it("with inline false answers each file's ids, keyed path and a signed link that works without a key", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word, ids } = await buildWordLeads(t.ctx.db, 4);
    // Whatever Accept says: `inline: false` is the JSON answer.
    const res = await exportJson(
      account.auth,
      { positiveKeywords: [word], inline: false },
      { Accept: "text/csv" },
    ).expect(200);
    expect(res.body.data).toMatchObject({ leadCount: 4, creditsUsed: 4, databaseType: "other" });
    const [file] = res.body.data.files as Record<string, unknown>[];
    expect(file).not.toHaveProperty("data");
    const entry = await t.request().get(`/api/v1/export-history`).set(account.auth).expect(200);
    const id = entry.body.data[0].id as number;
    expect(file).toMatchObject({
      fileName: `leads-main-${today()}.csv`,
      fileType: "csv",
      leadCount: 4,
      size: entry.body.data[0].fileSize,
      exportId: id,
      exportHistoryId: id,
      downloadUrl: `/api/v1/export-history/${id}/download`,
    });
    expect(res.body.data.exportId).toBe(id);
    // The keyed path needs the key; the signed link works without one.
    await t
      .request()
      .get(file!.downloadUrl as string)
      .expect(401);
    const keyed = await t
      .request()
      .get(file!.downloadUrl as string)
      .set(account.auth)
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(idsOf(csvRecords(keyed.body as Buffer))).toEqual(newestFirst(ids));
    const path = new URL(file!.directDownloadUrl as string).pathname;
    const download = await t.request().get(path).buffer(true).parse(binary).expect(200);
    expect((download.body as Buffer).equals(keyed.body as Buffer)).toBe(true);
    expect(Date.parse(file!.expiresAt as string)).toBeGreaterThan(Date.now() + 14 * 60_000);
  });
});

describe("POST /leads/export: cost controls", () => {
  it("maxCredits takes that many new leads first, then previously exported ones; 0 only those, free", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word, ids } = await buildWordLeads(t.ctx.db, 8);
    const received = [ids[0]!, ids[1]!, ids[2]!];
    await markReceived(t.ctx.db, account.accountId, received);
    const before = await creditsOf(account.auth);

    const free = await exportFile(account.auth, { positiveKeywords: [word], maxCredits: 0 }).expect(200);
    expect(idsOf(csvRecords(free.body as Buffer))).toEqual(newestFirst(received));
    expect(await creditsOf(account.auth)).toBe(before);

    const res = await exportFile(account.auth, { positiveKeywords: [word], maxCredits: 2 }).expect(200);
    // New leads first (newest first), then the received ones.
    expect(idsOf(csvRecords(res.body as Buffer))).toEqual([ids[7], ids[6], ...newestFirst(received)]);
    expect(await creditsOf(account.auth)).toBe(before - 2);
    expect(res.headers["x-credits-capped"]).toBeUndefined();
  });

  it("maxResults caps the results, new leads first, previously exported fill the rest", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word, ids } = await buildWordLeads(t.ctx.db, 6);
    await markReceived(t.ctx.db, account.accountId, [ids[4]!, ids[5]!]);
    const before = await creditsOf(account.auth);
    const res = await exportFile(account.auth, { positiveKeywords: [word], maxResults: 5 }).expect(200);
    expect(idsOf(csvRecords(res.body as Buffer))).toEqual([ids[3], ids[2], ids[1], ids[0], ids[5]]);
    expect(await creditsOf(account.auth)).toBe(before - 4);
  });

  it("maxLeads keeps the overflow in the reservoir, which comes first in the next export", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word, ids } = await buildWordLeads(t.ctx.db, 6);
    const first = await exportFile(account.auth, { positiveKeywords: [word], maxLeads: 2 }).expect(200);
    expect(idsOf(csvRecords(first.body as Buffer))).toEqual([ids[5], ids[4]]);
    expect(await reservoirOf(account.accountId)).toEqual(ids.slice(0, 4));

    // Newer matches arrive; the reservoir's leads still come first (in the sort order).
    const newer = await buildWordLeads(t.ctx.db, 2, (i) => ({
      company_name: `${word} Newer ${i}`,
      last_updated: new Date(Date.UTC(2026, 5, 1) + i),
      last_buying_signal: new Date(Date.UTC(2026, 5, 1) + i),
    }));
    const second = await exportFile(account.auth, { positiveKeywords: [word], maxLeads: 3 }).expect(200);
    expect(idsOf(csvRecords(second.body as Buffer))).toEqual([ids[3], ids[2], ids[1]]);
    // Exported leads leave the reservoir; the new overflow joins it.
    expect(await reservoirOf(account.accountId)).toEqual(
      [ids[0]!, ids[4]!, ids[5]!, ...newer.ids].sort((a, b) => a - b),
    );
    const charged = (await chargeRows(account.accountId)).reduce((s, r) => s - r.amount_tenths, 0);
    expect(charged).toBe(50);
  });

  it("keeps only the overflow within maxResults, and reservoir leads another export does not match stay", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word, ids } = await buildWordLeads(t.ctx.db, 6);
    const res = await exportFile(account.auth, {
      positiveKeywords: [word],
      maxLeads: 2,
      maxResults: 4,
    }).expect(200);
    expect(idsOf(csvRecords(res.body as Buffer))).toEqual([ids[5], ids[4]]);
    expect(await reservoirOf(account.accountId)).toEqual([ids[2]!, ids[3]!]);

    const other = await buildWordLeads(t.ctx.db, 1);
    const unrelated = await exportFile(account.auth, { positiveKeywords: [other.word] }).expect(200);
    expect(idsOf(csvRecords(unrelated.body as Buffer))).toEqual(other.ids);
    expect(await reservoirOf(account.accountId)).toEqual([ids[2]!, ids[3]!]);
  });

  it("caps new leads at the spendable balance with X-Credits-Capped", async () => {
    const account = await buildAccount(t.ctx.db, { monthlyCredits: 3, permanentCredits: 0 });
    const { word, ids } = await buildWordLeads(t.ctx.db, 5);
    expect(await creditsOf(account.auth)).toBe(3);
    const res = await exportFile(account.auth, { positiveKeywords: [word] }).expect(200);
    expect(res.headers["x-credits-capped"]).toBe("true");
    expect(idsOf(csvRecords(res.body as Buffer))).toEqual([ids[4], ids[3], ids[2]]);
    expect(await creditsOf(account.auth)).toBe(0);
  });

  it("leaves blacklisted domains out, and does not charge for them", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word, ids } = await buildWordLeads(t.ctx.db, 4);
    await t
      .request()
      .post("/api/v1/export-blacklist")
      .set(account.auth)
      .send({ entries: [{ entryType: "domain", value: `${word}-1.example.org` }] })
      .expect(201);
    const before = await creditsOf(account.auth);
    const res = await exportFile(account.auth, { positiveKeywords: [word] }).expect(200);
    expect(idsOf(csvRecords(res.body as Buffer))).toEqual([ids[3], ids[2], ids[0]]);
    expect(await creditsOf(account.auth)).toBe(before - 3);
  });
});

describe("POST /leads/export: refusals", () => {
  it("answers 400 export_too_large for an XLSX file over 20,000 rows before anything is charged", async () => {
    const account = await buildAccount(t.ctx.db, { plan: "platinum" });
    const word = uniqueWord("big");
    await sql`
      insert into leads (external_id, company_name, last_updated, last_buying_signal)
      select ${word} || '-' || g, ${word} || ' Co ' || g, now(), now() from generate_series(1, 20001) g`.execute(
      t.ctx.db,
    );
    const before = await creditsOf(account.auth);
    const res = await exportJson(account.auth, { positiveKeywords: [word], fileType: "xlsx" }).expect(400);
    expect(res.body.error).toBe("export_too_large");
    expect(await creditsOf(account.auth)).toBe(before);
    expect(await jobsOf(account.accountId)).toHaveLength(0);
    // Capped below the limit it fits.
    const ok = await exportFile(account.auth, {
      positiveKeywords: [word],
      fileType: "xlsx",
      maxLeads: 20_000,
    }).expect(200);
    expect(ok.headers["content-type"]).toMatch(/spreadsheetml/);
  }, 120_000);

  it("counts an unsplit XLSX export as a lead query: 429 lead_query_capacity_busy when 10 run", async () => {
    const account = await buildAccount(t.ctx.db, { plan: "platinum" });
    const word = uniqueWord("slots");
    await buildLeads(t.ctx.db, 3, (i) => ({ company_name: `${word} ${i}` }));
    await holdLeadQuerySlots(t.ctx.db, account.accountId, 10);
    const before = await creditsOf(account.auth);
    const res = await exportJson(account.auth, { positiveKeywords: [word], fileType: "xlsx" }).expect(429);
    expect(res.body.error).toBe("lead_query_capacity_busy");
    expect(res.headers["retry-after"]).toBe("10");
    expect(await creditsOf(account.auth)).toBe(before);
    expect(await jobsOf(account.accountId)).toHaveLength(0);
    // Capped within one file, or as CSV, nothing has to be counted first.
    await exportFile(account.auth, { positiveKeywords: [word], fileType: "xlsx", maxLeads: 20_000 }).expect(
      200,
    );
    const csv = await exportFile(account.auth, { positiveKeywords: [word] }).expect(200);
    expect(csvRecords(csv.body)).toHaveLength(3);
  });

  it("answers 400 validation_error without a positive filter or for an unknown formatId; nothing charged", async () => {
    const account = await buildAccount(t.ctx.db);
    const before = await creditsOf(account.auth);
    const none = await exportJson(account.auth, { stateInclude: ["TX"] }).expect(400);
    expect(none.body.error).toBe("validation_error");
    const other = await buildAccount(t.ctx.db);
    const format = await buildFormat(t.ctx.db, other.accountId);
    const unknown = await exportJson(account.auth, { positiveKeywords: ["x"], formatId: format.id }).expect(
      400,
    );
    expect(unknown.body).toMatchObject({ error: "validation_error" });
    expect(unknown.body.details[0].path).toEqual(["body", "formatId"]);
    const badCap = await exportJson(account.auth, { positiveKeywords: ["x"], maxLeads: 100_001 }).expect(400);
    expect(badCap.body.error).toBe("validation_error");
    expect(await creditsOf(account.auth)).toBe(before);
  });

  it("answers 429 charge_in_progress when the account's charge lock stays taken; nothing charged", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word } = await buildWordLeads(t.ctx.db, 2);
    const before = await creditsOf(account.auth);
    const lock = await holdChargeLock(t.ctx.db, account.accountId);
    try {
      const res = await exportJson(account.auth, { positiveKeywords: [word] }).expect(429);
      expect(res.body.error).toBe("charge_in_progress");
      expect(res.headers["retry-after"]).toBe("30");
    } finally {
      await lock.release();
    }
    expect(await creditsOf(account.auth)).toBe(before);
    expect(
      await t.ctx.db
        .selectFrom("export_history")
        .select("id")
        .where("account_id", "=", account.accountId)
        .execute(),
    ).toHaveLength(0);
  });

  it("answers 402 when a concurrent request spent the balance first; the Idempotency-Key stays usable", async () => {
    const account = await buildAccount(t.ctx.db, { monthlyCredits: 5, permanentCredits: 0 });
    const { word } = await buildWordLeads(t.ctx.db, 3);
    const key = { "Idempotency-Key": `exp-${uniqueWord()}` };
    let spend: () => void = () => {};
    const spendNow = new Promise<void>((resolve) => (spend = resolve));
    let locked: () => void = () => {};
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    // Another request holds the account's charge lock and spends the whole balance meanwhile.
    const concurrent = t.ctx.db.transaction().execute(async (trx) => {
      const { period_start } = await trx
        .selectFrom("accounts")
        .select("period_start")
        .where("id", "=", account.accountId)
        .forNoKeyUpdate()
        .executeTakeFirstOrThrow();
      locked();
      await spendNow;
      await chargeCredits(trx, {
        accountId: account.accountId,
        periodStart: period_start,
        tenths: 50,
        reason: "test_concurrent",
      });
    });
    await isLocked;
    const accepted = await exportJson(
      account.auth,
      { positiveKeywords: [word] },
      { ...key, Prefer: "respond-async" },
    ).expect(202);
    const poll = `/api/v1/jobs/${accepted.body.jobId as string}`;
    for (let i = 0; i < 100; i += 1) {
      const state = await t.request().get(poll).set(account.auth).set("Prefer", "wait=0");
      if (state.status !== 202 || state.body.phase === "charging") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    spend();
    await concurrent;
    const failed = await t.request().get(poll).set(account.auth).set("Prefer", "wait=20").expect(402);
    expect(failed.body.error).toBe("insufficient_credits");
    expect(await creditsOf(account.auth)).toBe(0);
    const files = await t.ctx.db
      .selectFrom("export_history")
      .select("id")
      .where("account_id", "=", account.accountId)
      .execute();
    expect(files).toHaveLength(0);
    const history = await t.ctx.db
      .selectFrom("lead_export_history")
      .select("id")
      .where("account_id", "=", account.accountId)
      .execute();
    expect(history).toHaveLength(0);
    // The files the failed attempt wrote are removed with it.
    const accountFiles = join(t.ctx.config.dataDir, "files", "exports", String(account.accountId));
    const left = existsSync(accountFiles)
      ? readdirSync(accountFiles, { recursive: true, withFileTypes: true }).filter((e) => e.isFile())
      : [];
    expect(left).toEqual([]);

    // The 402 did not use the key up: the same key runs the export again (now capped at 0 credits).
    const retry = await exportFile(account.auth, { positiveKeywords: [word] }, key).expect(200);
    expect(retry.headers["x-svc-job-id"]).not.toBe(accepted.body.jobId);
    expect(retry.headers["x-credits-capped"]).toBe("true");
    expect(csvRecords(retry.body as Buffer)).toHaveLength(0);
  });

  it("runs at most 3 exports of an account at once: a 4th gets 429 job_capacity_busy", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word } = await buildWordLeads(t.ctx.db, 1);
    // The three jobs wait for the account's charge lock (2 s) while the 4th request arrives.
    const lock = await holdChargeLock(t.ctx.db, account.accountId);
    try {
      for (let i = 0; i < 3; i += 1) {
        await exportJson(
          account.auth,
          { positiveKeywords: [word], maxLeads: i + 1 },
          { Prefer: "respond-async" },
        ).expect(202);
      }
      const busy = await exportJson(account.auth, { positiveKeywords: [word], maxLeads: 9 }).expect(429);
      expect(busy.body.error).toBe("job_capacity_busy");
      expect(busy.headers["retry-after"]).toBe("30");
    } finally {
      await lock.release();
    }
  });

  it("answers 401 without a valid key and 403 without a paid plan", async () => {
    await t
      .request()
      .post("/api/v1/leads/export")
      .send({ positiveKeywords: ["x"] })
      .expect(401);
    await t
      .request()
      .post("/api/v1/leads/export")
      .set({ Authorization: "Bearer svck_notarealkeynotarealkeynotarealkey1234" })
      .send({ positiveKeywords: ["x"] })
      .expect(401);
    const canceled = await buildAccount(t.ctx.db, { status: "canceled" });
    await exportJson(canceled.auth, { positiveKeywords: ["x"] }).expect(403);
  });
});

describe("POST /leads/export: the job protocol", () => {
  it("replays an Idempotency-Key with the stored file and charges once", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word, ids } = await buildWordLeads(t.ctx.db, 3);
    const before = await creditsOf(account.auth);
    const key = { "Idempotency-Key": `exp-${uniqueWord()}` };
    const first = await exportFile(account.auth, { positiveKeywords: [word] }, key).expect(200);
    const replay = await exportFile(account.auth, { positiveKeywords: [word] }, key).expect(200);
    expect(replay.headers["x-svc-job-id"]).toBe(first.headers["x-svc-job-id"]);
    expect(idsOf(csvRecords(replay.body as Buffer))).toEqual(newestFirst(ids));
    expect((replay.body as Buffer).equals(first.body as Buffer)).toBe(true);
    expect(await creditsOf(account.auth)).toBe(before - 3);
    expect(await chargeRows(account.accountId)).toHaveLength(1);
  });

  it("answers 202 with respond-async; a second key polls the file; another account gets 404", async () => {
    const account = await buildAccount(t.ctx.db);
    const second = await buildKey(t.ctx.db, account.accountId);
    const { word, ids } = await buildWordLeads(t.ctx.db, 2);
    const accepted = await exportJson(
      account.auth,
      { positiveKeywords: [word] },
      { Prefer: "respond-async", Accept: "text/csv" },
    ).expect(202);
    expect(accepted.body).toMatchObject({ status: "running", kind: "api_leads_export" });
    const jobId = accepted.body.jobId as string;
    expect(accepted.headers.location).toBe(`/api/v1/jobs/${jobId}`);

    const other = await buildAccount(t.ctx.db);
    const foreign = await t.request().get(`/api/v1/jobs/${jobId}`).set(other.auth).expect(404);
    expect(foreign.body.error).toBe("job_not_found");

    const polled = await t
      .request()
      .get(`/api/v1/jobs/${jobId}`)
      .set(second.auth)
      .set("Prefer", "wait=20")
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(polled.headers["x-svc-job-status"]).toBe("completed");
    expect(polled.headers["content-disposition"]).toContain(`leads-main-${today()}.csv`);
    expect(idsOf(csvRecords(polled.body as Buffer))).toEqual(newestFirst(ids));
  });
});

describe("POST /leads/export: a worker killed mid-export", () => {
  it("charges nothing for the killed run; the retried run answers the file and charges once", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word, ids } = await buildWordLeads(t.ctx.db, 3);
    const before = await creditsOf(account.auth);
    // Only the worker process runs jobs until it is killed.
    await worker.runner?.stop();
    const child = await startExportWorkerProcess(t.database.url, join(t.ctx.config.dataDir, "files"));
    // Holds the account's charge lock, so the job stops right before its charging transaction.
    const lock = await holdChargeLock(t.ctx.db, account.accountId);
    let jobId = "";
    try {
      const accepted = await exportJson(
        account.auth,
        { positiveKeywords: [word] },
        { Prefer: "respond-async", Accept: "text/csv" },
      ).expect(202);
      jobId = accepted.body.jobId as string;
      await expect
        .poll(
          async () =>
            (
              await t.ctx.db
                .selectFrom("jobs")
                .select("phase")
                .where("id", "=", jobId)
                .executeTakeFirstOrThrow()
            ).phase,
          { timeout: 20_000, interval: 20 },
        )
        .toBe("charging");
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      await lock.release();
      worker.runner = await startJobRunner(t.ctx);
    }
    expect(await chargeRows(account.accountId)).toEqual([]);
    // The killed attempt had written its file (it was waiting to charge).
    const exportsDir = join(t.ctx.config.dataDir, "files", "exports", String(account.accountId));
    expect(readdirSync(exportsDir)).toEqual([`job-${jobId}-1`]);

    // The sweep hands the silent worker's job back; the in-process runner runs it again.
    await t.ctx.db
      .updateTable("jobs")
      .set({ heartbeat_at: new Date(Date.now() - 5 * 60_000) })
      .where("id", "=", jobId)
      .execute();
    await sweepJobs({ db: t.ctx.db, storage: t.ctx.storage, logger: t.ctx.logger });
    const done = await t
      .request()
      .get(`/api/v1/jobs/${jobId}`)
      .set(account.auth)
      .set("Prefer", "wait=30")
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(idsOf(csvRecords(done.body as Buffer))).toEqual(newestFirst(ids));
    const charges = await chargeRows(account.accountId);
    expect(charges.map((c) => [c.reference, c.amount_tenths])).toEqual([[jobId, -30]]);
    expect(await creditsOf(account.auth)).toBe(before - 3);
    const files = await t.ctx.db
      .selectFrom("export_history")
      .select("id")
      .where("account_id", "=", account.accountId)
      .execute();
    expect(files).toHaveLength(1);
    // The retry removed the killed attempt's files; only its own are kept.
    expect(readdirSync(exportsDir)).toEqual([`job-${jobId}-2`]);
  }, 60_000);
});
