import { HeadObjectCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "kysely";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app/create-app.js";
import { composeSendMail } from "../src/email-schedules/run/mail.js";
import { runDueSchedules } from "../src/email-schedules/run/runner.js";
import type { ExportHistoryEntry } from "../src/export-history/entry.js";
import { deleteExpiredExportFiles } from "../src/export-history/service.js";
import { keepLargeBody } from "../src/jobs/large-bodies.js";
import { createMailer } from "../src/mail/mailer.js";
import { mailSendTask } from "../src/mail/task.js";
import type { S3Storage } from "../src/storage/s3.js";
import { useJobRunner, useTestApp } from "./helpers/app.js";
import { binary, buildFormat, readZip } from "./helpers/export-factories.js";
import { buildWordLeads, csvRecords } from "./helpers/export-job-factories.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLead, uniqueWord } from "./helpers/leads-factories.js";
import { startLocalS3, S3RVER_CREDENTIALS, type LocalS3 } from "./helpers/s3-server.js";

// The test app with its files in a local S3 server (signature and expiry checks on) instead of
// DATA_DIR: every file-producing operation must write through the adapter into the bucket.
const t = useTestApp();
let s3: LocalS3;
let bucket: S3Client;
beforeAll(async () => {
  s3 = await startLocalS3();
  t.ctx.storage = s3.storage();
  t.app = createApp(t.ctx);
  bucket = new S3Client({
    region: "us-east-1",
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: S3RVER_CREDENTIALS,
  });
});
useJobRunner(t);
afterAll(async () => {
  bucket?.destroy();
  (t.ctx.storage as S3Storage | undefined)?.close?.();
  await s3?.destroy();
});

type Auth = { Authorization: string };
const today = () => new Date().toISOString().slice(0, 10);

/** The keys in the bucket under `prefix`. */
async function keysUnder(prefix: string): Promise<string[]> {
  const page = await bucket.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }));
  return (page.Contents ?? []).map((o) => o.Key!).sort();
}

/**
 * Whether the bucket holds the key: only the store's 404 means no. Any other failure (a socket the
 * client kept from before the store was restarted) is asked again, then thrown.
 */
async function inBucket(key: string): Promise<boolean> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await bucket.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: key }));
      return true;
    } catch (err) {
      if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404)
        return false;
      if (attempt === 3) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Nothing was written to this process's own disk: the files went to the bucket. */
function expectNothingOnDisk() {
  const files = join(t.ctx.config.dataDir, "files");
  expect(existsSync(files) ? readdirSync(files) : []).toEqual([]);
}

function exportFile(auth: Auth, body: Record<string, unknown>) {
  return t
    .request()
    .post("/api/v1/leads/export")
    .set(auth)
    .set({ Accept: "text/csv" })
    .send(body)
    .buffer(true)
    .parse(binary);
}

async function creditsOf(auth: Auth): Promise<number> {
  const res = await t.request().get("/api/v1/me").set(auth).expect(200);
  return res.body.data.totalCreditsRemaining as number;
}

async function historyRows(accountId: number) {
  return t.ctx.db
    .selectFrom("export_history")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("id")
    .execute();
}

async function chargeCount(accountId: number): Promise<number> {
  const rows = await t.ctx.db
    .selectFrom("credit_ledger")
    .select("id")
    .where("account_id", "=", accountId)
    .where("kind", "=", "charge")
    .execute();
  return rows.length;
}

/** Fetches a URL with no API key (a browser following a link). */
async function fetchPlain(
  url: string,
): Promise<{ status: number; disposition: string | null; body: Buffer }> {
  const res = await fetch(url);
  return {
    status: res.status,
    disposition: res.headers.get("content-disposition"),
    body: Buffer.from(await res.arrayBuffer()),
  };
}

/** Runs `check` with the S3 server stopped, then starts it again. */
async function whileStoreDown(check: () => Promise<void>): Promise<void> {
  await s3.stop();
  try {
    await check();
  } finally {
    await s3.start();
  }
}

function expect503(res: { status: number; headers: Record<string, string>; body: unknown; text: string }) {
  expect(res.status).toBe(503);
  expect(res.headers["retry-after"]).toBe("30");
  expect(res.body).toEqual({ error: "service_unavailable", message: expect.any(String) });
  expect(res.text).not.toMatch(/ECONNREFUSED|at .*\.ts:\d+|S3Storage/);
}

describe("exports in the bucket", () => {
  it("writes the file to the bucket; it is listed, streamed by the keyed download and linked presigned", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word } = await buildWordLeads(t.ctx.db, 4);
    const res = await exportFile(account.auth, { positiveKeywords: [word] }).expect(200);
    const [row] = await historyRows(account.accountId);
    expect(await inBucket(row!.storage_key)).toBe(true);
    expect(await keysUnder(`exports/${account.accountId}/`)).toEqual([row!.storage_key]);
    expectNothingOnDisk();

    const list = await t.request().get("/api/v1/export-history").set(account.auth).expect(200);
    expect(list.body.data[0]).toMatchObject({
      id: row!.id,
      downloadAvailable: true,
      fileSize: row!.file_size,
    });

    const keyed = await t
      .request()
      .get(`/api/v1/export-history/${row!.id}/download`)
      .set(account.auth)
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(Buffer.compare(keyed.body as Buffer, res.body as Buffer)).toBe(0);
    expect(keyed.headers["content-length"]).toBe(String(row!.file_size));

    const before = Date.now();
    const link = await t
      .request()
      .get(`/api/v1/export-history/${row!.id}/download-url`)
      .set(account.auth)
      .expect(200);
    const { downloadUrl, expiresInSeconds, fileName } = link.body.data as Record<string, string | number>;
    expect(fileName).toBe(`leads-main-${today()}.csv`);
    expect(String(downloadUrl).startsWith(`${s3.endpoint}/${s3.bucket}/exports/${account.accountId}/`)).toBe(
      true,
    );
    expect(new URL(String(downloadUrl)).searchParams.get("X-Amz-Expires")).toBe("900");
    expect(expiresInSeconds).toBeGreaterThanOrEqual(898);
    expect(expiresInSeconds).toBeLessThanOrEqual(900);
    const direct = await fetchPlain(String(downloadUrl));
    expect(direct.status).toBe(200);
    expect(direct.disposition).toBe(`attachment; filename="leads-main-${today()}.csv"`);
    expect(Buffer.compare(direct.body, res.body as Buffer)).toBe(0);
    expect(Date.now() - before).toBeLessThan(60_000);
  });

  it("keeps another account from the file and its link", async () => {
    const owner = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const { word } = await buildWordLeads(t.ctx.db, 1);
    await exportFile(owner.auth, { positiveKeywords: [word] }).expect(200);
    const [row] = await historyRows(owner.accountId);
    await t.request().get(`/api/v1/export-history/${row!.id}/download`).set(other.auth).expect(404);
    await t.request().get(`/api/v1/export-history/${row!.id}/download-url`).set(other.auth).expect(404);
    await t.request().get(`/api/v1/export-history/${row!.id}/download-url`).expect(401);
  });

  it("writes a split export's parts and its ZIP answer to the bucket", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word } = await buildWordLeads(t.ctx.db, 5);
    const format = await buildFormat(t.ctx.db, account.accountId, {
      name: "Split",
      fileType: "csv",
      splitFiles: true,
      splitMode: "max_rows",
      maxRowsPerFile: 2,
    });
    const res = await exportFile(account.auth, { positiveKeywords: [word], formatId: format.id }).expect(200);
    const members = readZip(res.body as Buffer);
    expect(members.size).toBe(3);
    const keys = await keysUnder(`exports/${account.accountId}/`);
    const base = `leads-main-${today()}`;
    expect(keys.map((k) => k.slice(k.lastIndexOf("/") + 1))).toEqual([
      `${base}.zip`,
      `${base}_part1.csv`,
      `${base}_part2.csv`,
      `${base}_part3.csv`,
    ]);
    expectNothingOnDisk();
  });

  it("answers JSON with each file's contents and with links that download from any host", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word } = await buildWordLeads(t.ctx.db, 3);
    const json = await t
      .request()
      .post("/api/v1/leads/export")
      .set(account.auth)
      .send({ positiveKeywords: [word] })
      .expect(200);
    expect(csvRecords(Buffer.from(json.body.data.files[0].data as string))).toHaveLength(3);
    const links = await t
      .request()
      .post("/api/v1/leads/export")
      .set(account.auth)
      .send({ positiveKeywords: [word], inline: false })
      .expect(200);
    const file = links.body.data.files[0] as { directDownloadUrl: string };
    const direct = await t
      .request()
      .get(new URL(file.directDownloadUrl).pathname)
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(csvRecords(direct.body as Buffer)).toHaveLength(3);
    expect(await keysUnder(`exports/${account.accountId}/`)).toHaveLength(2);
  });
});

describe("lead export history files in the bucket", () => {
  async function received(count: number) {
    const account = await buildAccount(t.ctx.db);
    const { word } = await buildWordLeads(t.ctx.db, count);
    await exportFile(account.auth, { positiveKeywords: [word] }).expect(200);
    const entries = await t.ctx.db
      .selectFrom("lead_export_history")
      .select("id")
      .where("account_id", "=", account.accountId)
      .execute();
    return { ...account, trackingIds: entries.map((e) => e.id) };
  }

  it("re-export and refresh-and-export write their files through the adapter", async () => {
    const account = await received(3);
    const before = await keysUnder(`exports/${account.accountId}/`);
    const again = await t
      .request()
      .post("/api/v1/lead-export-history/re-export")
      .set(account.auth)
      .send({ trackingIds: account.trackingIds })
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(csvRecords(again.body as Buffer)).toHaveLength(3);
    const afterReExport = await keysUnder(`exports/${account.accountId}/`);
    expect(afterReExport.length).toBeGreaterThan(before.length);

    const fresh = await t
      .request()
      .post("/api/v1/lead-export-history/refresh-and-export")
      .set(account.auth)
      .send({ trackingIds: account.trackingIds })
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(fresh.headers["content-disposition"]).toContain("refreshed-export-");
    expect(csvRecords(fresh.body as Buffer)).toHaveLength(3);
    const afterRefresh = await keysUnder(`exports/${account.accountId}/`);
    expect(afterRefresh.length).toBeGreaterThan(afterReExport.length);
    expect(afterRefresh.some((k) => k.includes("refreshed-export-"))).toBe(true);
    expectNothingOnDisk();
  });
});

describe("enrichment results in the bucket", () => {
  it("the worker writes the result file to the bucket; its 5-minute link is presigned", async () => {
    const { auth, accountId } = await buildAccount(t.ctx.db);
    const host = `${uniqueWord()}.test`;
    await buildLead(t.ctx.db, { registered_url: `https://www.${host}`, company_name: "Bucket Co" });
    const submitted = await t
      .request()
      .post("/api/v1/enrichments")
      .set(auth)
      .send({ urls: [`https://${host}/`] })
      .expect(202);
    const id = submitted.body.data.id as number;
    let status = "";
    for (let i = 0; i < 150 && status !== "completed"; i += 1) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await t.request().get(`/api/v1/enrichments/${id}`).set(auth).expect(200)).body.data.status;
    }
    expect(status).toBe("completed");
    const keys = await keysUnder(`exports/${accountId}/enrichment-${id}/`);
    expect(keys).toHaveLength(1);

    const link = await t.request().get(`/api/v1/enrichments/${id}/download`).set(auth).expect(200);
    const { downloadUrl, expiresInSeconds } = link.body.data as {
      downloadUrl: string;
      expiresInSeconds: number;
    };
    expect(downloadUrl.startsWith(`${s3.endpoint}/${s3.bucket}/exports/${accountId}/enrichment-${id}/`)).toBe(
      true,
    );
    expect(new URL(downloadUrl).searchParams.get("X-Amz-Expires")).toBe("300");
    expect(expiresInSeconds).toBeGreaterThanOrEqual(298);
    const file = await fetchPlain(downloadUrl);
    expect(file.status).toBe(200);
    expect(file.disposition).toMatch(
      new RegExp(`^attachment; filename="enrichment-${id}-\\d{4}-\\d{2}-\\d{2}\\.csv"$`),
    );
    expect(file.body.toString()).toContain("Bucket Co");
    expectNothingOnDisk();
  });
});

describe("large job answers and mail files in the bucket", () => {
  it("keeps a large job answer in the bucket under the job's folder", async () => {
    const jobId = `00000000-0000-4000-8000-${String(Date.now()).padStart(12, "0").slice(-12)}`;
    const body = { data: Array.from({ length: 50 }, (_, i) => ({ i, text: "x".repeat(40) })) };
    const kept = await keepLargeBody(t.ctx.storage, { id: jobId, attempt: 1 }, { status: 200, body }, 100);
    expect(kept).toMatchObject({ bodyFile: { storageKey: `jobs/${jobId}/answer-1.json` } });
    expect(await keysUnder(`jobs/${jobId}/`)).toEqual([`jobs/${jobId}/answer-1.json`]);
    const stored = await t.ctx.storage.get(`jobs/${jobId}/answer-1.json`);
    let text = "";
    for await (const chunk of stored!) text += String(chunk);
    expect(JSON.parse(text)).toEqual(body);
  });

  it("answers a large export answer (JSON with the file inline) from the bucket, again on a later poll", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word } = await buildWordLeads(t.ctx.db, 1500);
    const res = await t
      .request()
      .post("/api/v1/leads/export")
      .set(account.auth)
      .send({ positiveKeywords: [word] })
      .expect(200);
    expect(csvRecords(Buffer.from(res.body.data.files[0].data as string))).toHaveLength(1500);
    const jobId = res.headers["x-svc-job-id"] as string;
    expect(jobId).toBeTruthy();
    const again = await t.request().get(`/api/v1/jobs/${jobId}`).set(account.auth).expect(200);
    expect(again.body.data.files[0].data).toBe(res.body.data.files[0].data);
    // Its bytes are read from the bucket each time it is answered.
    await whileStoreDown(async () => {
      expect503(await t.request().get(`/api/v1/jobs/${jobId}`).set(account.auth));
    });
    expectNothingOnDisk();
  });

  it("links a schedule mail's large files presigned for 7 days and attaches small ones read from the bucket", async () => {
    const { accountId } = await buildAccount(t.ctx.db);
    const key = `exports/${accountId}/schedule-test/leads-main-${today()}.csv`;
    await t.ctx.storage.put(key, Buffer.from("id,companyName\n1,Mail Co\n"));
    const now = new Date();
    const entry = {
      id: 1,
      accountId,
      fileName: `leads-main-${today()}.csv`,
      fileType: "csv",
      fileSize: 25,
      leadCount: 1,
      storageKey: key,
      expiresAt: new Date(now.getTime() + 90 * 86_400_000),
    } as ExportHistoryEntry;
    const signer = { signingSecret: t.ctx.signingSecret, publicBaseUrl: "https://leads.example.test" };
    const linked = await composeSendMail(
      { to: "ops@example.test", files: [entry] },
      { scheduleName: "Daily", leadCount: 1, attachmentLimitBytes: 0, signer, now, storage: t.ctx.storage },
    );
    const url = new RegExp(`(${s3.endpoint}\\S+)`).exec(linked.text)?.[1] ?? "";
    expect(new URL(url).searchParams.get("X-Amz-Expires")).toBe("604800");
    expect((await fetchPlain(url)).body.toString()).toContain("Mail Co");

    const attached = await composeSendMail(
      { to: "ops@example.test", files: [entry] },
      {
        scheduleName: "Daily",
        leadCount: 1,
        attachmentLimitBytes: 1_000,
        signer,
        now,
        storage: t.ctx.storage,
      },
    );
    expect(attached.attachments).toEqual([
      { filename: entry.fileName, contentType: "text/csv", storageKey: key },
    ]);
    const mailer = createMailer({
      smtpUrl: undefined,
      dataDir: t.ctx.config.dataDir,
      from: "Lead Service <no-reply@example.test>",
      logger: pino({ level: "silent" }),
    });
    const send = mailSendTask(mailer, t.ctx.storage);
    await send(
      attached as never,
      {
        job: { id: "1", task_identifier: "mail__send" },
        logger: { error: () => undefined },
      } as never,
    );
    const mailDir = join(t.ctx.config.dataDir, "mail");
    const eml = readdirSync(mailDir).map((f) => readFileSync(join(mailDir, f), "utf8"));
    expect(
      eml.some((m) => m.includes(Buffer.from("id,companyName\n1,Mail Co\n").toString("base64").slice(0, 20))),
    ).toBe(true);
    mailer.close();
  });
});

describe("e-mail schedules with the bucket", () => {
  async function dueSchedule(auth: Auth, word: string): Promise<number> {
    const preset = await t
      .request()
      .post("/api/v1/filter-presets")
      .set(auth)
      .send({ name: "preset", filters: { positiveKeywords: [word] } })
      .expect(201);
    const schedule = await t
      .request()
      .post("/api/v1/email-schedules")
      .set(auth)
      .send({
        name: "Bucket",
        filterPresetId: preset.body.data.id,
        intervalValue: 1,
        recipients: [{ email: `${uniqueWord("to")}@example.test` }],
      })
      .expect(201);
    const id = schedule.body.data.id as number;
    await t.ctx.db
      .updateTable("email_schedules")
      .set({ next_run_at: new Date(Date.now() - 1000) })
      .where("id", "=", id)
      .execute();
    return id;
  }

  const runnerDeps = () => ({
    db: t.ctx.db,
    storage: t.ctx.storage,
    signer: { signingSecret: t.ctx.signingSecret, publicBaseUrl: "https://leads.example.test" },
    // Every file as a link in the mail (none attached).
    attachmentLimitBytes: 0,
    logger: pino({ level: "silent" }),
  });

  async function mailsOf(accountId: number): Promise<string[]> {
    const keys = await historyRows(accountId);
    if (keys.length === 0) return [];
    const rows = await sql<{ payload: { text: string } }>`
      select j.payload from graphile_worker._private_jobs j
      join graphile_worker._private_tasks k on k.id = j.task_id
      where k.identifier = 'mail__send' and j.payload->>'text' like ${`%${keys[0]!.storage_key}%`}`.execute(
      t.ctx.db,
    );
    return rows.rows.map((r) => r.payload.text);
  }

  it("writes a send's files to the bucket and mails presigned links; with the store down it sends and charges nothing, then once", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word } = await buildWordLeads(t.ctx.db, 3);
    await dueSchedule(account.auth, word);
    const credits = await creditsOf(account.auth);

    await whileStoreDown(async () => {
      await runDueSchedules(runnerDeps());
    });
    expect(await creditsOf(account.auth)).toBe(credits);
    expect(await historyRows(account.accountId)).toEqual([]);
    expect(await chargeCount(account.accountId)).toBe(0);

    // Retried once the store is back (the schedule stayed due): sent and charged once.
    expect(await runDueSchedules(runnerDeps())).toBe(1);
    expect(await creditsOf(account.auth)).toBe(credits - 3);
    expect(await chargeCount(account.accountId)).toBe(1);
    const [file] = await historyRows(account.accountId);
    expect(await inBucket(file!.storage_key)).toBe(true);
    const [text] = await mailsOf(account.accountId);
    const url = new RegExp(`(${s3.endpoint}\\S+)`).exec(text ?? "")?.[1] ?? "";
    expect(url).not.toBe("");
    expect(Number(new URL(url).searchParams.get("X-Amz-Expires"))).toBeGreaterThan(600_000);
    const download = await fetchPlain(url);
    expect(download.status).toBe(200);
    expect(csvRecords(download.body)).toHaveLength(3);
    expect(await runDueSchedules(runnerDeps())).toBe(0);
    expectNothingOnDisk();
  });
});

describe("expiry", () => {
  it("the cleanup deletes expired files from the bucket, and marks nothing while the store is down", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word } = await buildWordLeads(t.ctx.db, 2);
    await exportFile(account.auth, { positiveKeywords: [word] }).expect(200);
    const [row] = await historyRows(account.accountId);
    await t.ctx.db
      .updateTable("export_history")
      .set({ created_at: new Date(Date.now() - 91 * 86_400_000), expires_at: new Date(Date.now() - 60_000) })
      .where("id", "=", row!.id)
      .execute();

    await whileStoreDown(async () => {
      await expect(deleteExpiredExportFiles(t.ctx.db, t.ctx.storage)).rejects.toMatchObject({ status: 503 });
    });
    const [still] = await historyRows(account.accountId);
    expect(still!.file_deleted_at).toBeNull();
    expect(await inBucket(row!.storage_key)).toBe(true);

    await deleteExpiredExportFiles(t.ctx.db, t.ctx.storage);
    expect(await inBucket(row!.storage_key)).toBe(false);
    const [after] = await historyRows(account.accountId);
    expect(after!.file_deleted_at).not.toBeNull();
    const list = await t.request().get("/api/v1/export-history").set(account.auth).expect(200);
    expect(list.body.data[0]).toMatchObject({ downloadAvailable: false, unavailableReason: "expired" });
  });
});

describe("the store down", () => {
  it("answers 503 with Retry-After 30 for listing, downloads and links, and works again after", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word } = await buildWordLeads(t.ctx.db, 2);
    await exportFile(account.auth, { positiveKeywords: [word] }).expect(200);
    const [row] = await historyRows(account.accountId);
    const links = await t
      .request()
      .post("/api/v1/leads/export")
      .set(account.auth)
      .send({ positiveKeywords: [word], inline: false })
      .expect(200);
    const signedPath = new URL(links.body.data.files[0].directDownloadUrl as string).pathname;

    await whileStoreDown(async () => {
      expect503(await t.request().get("/api/v1/export-history").set(account.auth));
      expect503(await t.request().get(`/api/v1/export-history/${row!.id}/download`).set(account.auth));
      expect503(await t.request().get(`/api/v1/export-history/${row!.id}/download-url`).set(account.auth));
      expect503(await t.request().get(signedPath));
    });
    await t.request().get(`/api/v1/export-history/${row!.id}/download`).set(account.auth).expect(200);
  });

  it("an export whose file cannot be stored answers 503 and charges nothing; the retry charges once", async () => {
    const account = await buildAccount(t.ctx.db);
    const { word } = await buildWordLeads(t.ctx.db, 3);
    const credits = await creditsOf(account.auth);
    await whileStoreDown(async () => {
      const res = await t
        .request()
        .post("/api/v1/leads/export")
        .set(account.auth)
        .set({ Accept: "text/csv" })
        .send({ positiveKeywords: [word] });
      expect503(res as never);
    });
    expect(await creditsOf(account.auth)).toBe(credits);
    expect(await historyRows(account.accountId)).toEqual([]);
    expect(await chargeCount(account.accountId)).toBe(0);
    const received = await sql<{ n: string }>`select count(*) as n from lead_export_history
      where account_id = ${account.accountId}`.execute(t.ctx.db);
    expect(Number(received.rows[0]!.n)).toBe(0);

    await exportFile(account.auth, { positiveKeywords: [word] }).expect(200);
    expect(await creditsOf(account.auth)).toBe(credits - 3);
    expect(await chargeCount(account.accountId)).toBe(1);
    expect(await historyRows(account.accountId)).toHaveLength(1);
  });

  it("an enrichment link answers 503 while the store is down", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const host = `${uniqueWord()}.test`;
    await buildLead(t.ctx.db, { registered_url: `https://www.${host}` });
    const id = (
      await t
        .request()
        .post("/api/v1/enrichments")
        .set(auth)
        .send({ urls: [`https://${host}/`] })
        .expect(202)
    ).body.data.id as number;
    let status = "";
    for (let i = 0; i < 150 && status !== "completed"; i += 1) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await t.request().get(`/api/v1/enrichments/${id}`).set(auth).expect(200)).body.data.status;
    }
    expect(status).toBe("completed");
    await whileStoreDown(async () => {
      expect503(await t.request().get(`/api/v1/enrichments/${id}/download`).set(auth));
    });
  });
});
