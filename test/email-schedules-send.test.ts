import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { run, type Runner } from "graphile-worker";
import { sql } from "kysely";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { chargeCredits, lockAccountCredits } from "../src/credits/ledger.js";
import { runDueSchedules } from "../src/email-schedules/run/runner.js";
import { jobTaskList } from "../src/jobs/index.js";
import { workerLogger } from "../src/jobs/runtime.js";
import { createMailer, type Mailer } from "../src/mail/mailer.js";
import { MAIL_TASK } from "../src/mail/queue.js";
import { mailSendTask } from "../src/mail/task.js";
import { useTestApp } from "./helpers/app.js";
import { holdEntries } from "./helpers/charge-lock.js";
import { csvRecords, xlsxRecords } from "./helpers/export-job-factories.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLeads, uniqueWord } from "./helpers/leads-factories.js";
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from "./helpers/smtp.js";

const t = useTestApp();
const silent = pino({ level: "silent" });
type Auth = { Authorization: string };

let smtp: TestSmtpServer;
let mailer: Mailer;
let runner: Runner | undefined;

beforeAll(async () => {
  smtp = await startSmtpServer();
  mailer = createMailer({
    smtpUrl: smtp.url,
    dataDir: t.ctx.config.dataDir,
    from: "svc@example.com",
    logger: silent,
  });
  await t.ctx.jobs.ensureQueue();
  runner = await startRunner();
});

afterAll(async () => {
  await runner?.stop();
  mailer?.close();
  await smtp?.close();
});

/** The worker of these tests: job runs (triggers) and mail sending, with the file storage. */
function startRunner(): Promise<Runner> {
  return run({
    pgPool: t.ctx.pool,
    concurrency: 4,
    noHandleSignals: true,
    pollInterval: 100,
    taskList: {
      ...jobTaskList({
        db: t.ctx.db,
        storage: t.ctx.storage,
        logger: silent,
        signingSecret: t.ctx.signingSecret,
      }),
      [MAIL_TASK]: mailSendTask(mailer, t.ctx.storage),
    },
    logger: workerLogger(silent),
  });
}

const runnerDeps = (attachmentLimitBytes = 15 * 1024 * 1024) => ({
  db: t.ctx.db,
  storage: t.ctx.storage,
  signer: { signingSecret: t.ctx.signingSecret, publicBaseUrl: "http://files.test" },
  attachmentLimitBytes,
  logger: silent,
});

// --- MIME: the attachments of a received message --------------------------------------------

interface Attachment {
  filename: string;
  content: Buffer;
}

function entity(raw: string): { headers: Map<string, string>; body: string } {
  const end = raw.search(/\r?\n\r?\n/);
  const head = end === -1 ? raw : raw.slice(0, end);
  const body = end === -1 ? "" : raw.slice(end).replace(/^\r?\n\r?\n/, "");
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, " ").split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body };
}

function decodeBody(body: string, encoding: string): Buffer {
  if (encoding === "base64") return Buffer.from(body.replace(/\s+/g, ""), "base64");
  if (encoding === "quoted-printable") {
    const soft = body.replace(/=\r?\n/g, "");
    const bytes: number[] = [];
    for (let i = 0; i < soft.length; i += 1) {
      const hex = soft[i] === "=" ? soft.slice(i + 1, i + 3) : "";
      if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
        bytes.push(parseInt(hex, 16));
        i += 2;
      } else bytes.push(...Buffer.from(soft[i]!, "utf8"));
    }
    return Buffer.from(bytes);
  }
  return Buffer.from(body, "utf8");
}

/** The file name of a part: `filename="..."`, RFC 2231 pieces (`filename*0*=`), or `name=`. */
function fileNameOf(headers: Map<string, string>): string | undefined {
  const disposition = headers.get("content-disposition") ?? "";
  const plain = /filename="?([^";]+)"?/i.exec(disposition)?.[1];
  if (plain) return plain;
  const pieces = [...disposition.matchAll(/filename\*(\d+)\*?="?([^";]+)"?/gi)]
    .sort((a, b) => Number(a[1]) - Number(b[1]))
    .map((m) => m[2]!);
  if (pieces.length > 0) return decodeURIComponent(pieces.join("").replace(/^utf-8''/i, ""));
  return /name="?([^";]+)"?/i.exec(headers.get("content-type") ?? "")?.[1];
}

function attachmentsOf(raw: string): Attachment[] {
  const { headers, body } = entity(raw);
  const type = headers.get("content-type") ?? "text/plain";
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (type.toLowerCase().startsWith("multipart/") && boundary) {
    return body
      .split(`--${boundary}`)
      .slice(1, -1)
      .flatMap((part) => attachmentsOf(part.replace(/^\r?\n/, "")));
  }
  const filename = fileNameOf(headers);
  if (!filename || !/attachment/i.test(headers.get("content-disposition") ?? "")) return [];
  return [
    {
      filename,
      content: decodeBody(body, (headers.get("content-transfer-encoding") ?? "7bit").toLowerCase()),
    },
  ];
}

// --- fixtures -------------------------------------------------------------------------------

async function createPreset(auth: Auth, word: string): Promise<number> {
  const res = await t
    .request()
    .post("/api/v1/filter-presets")
    .set(auth)
    .send({ name: "preset", filters: { positiveKeywords: [word] } })
    .expect(201);
  return res.body.data.id as number;
}

/** `count` leads named after `word`; later ones were updated last (the default sort puts them first). */
async function wordLeads(word: string, count: number, from = 0): Promise<number[]> {
  return buildLeads(t.ctx.db, count, (i) => ({
    company_name: `${word} Company ${from + i}`,
    registered_url: `https://${word}-${from + i}.example.org`,
    last_updated: new Date(Date.UTC(2026, 0, 1) + (from + i) * 60_000),
  }));
}

async function createSchedule(auth: Auth, body: Record<string, unknown>): Promise<{ id: number }> {
  const res = await t.request().post("/api/v1/email-schedules").set(auth).send(body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as { id: number };
}

async function makeDue(id: number): Promise<void> {
  await t.ctx.db
    .updateTable("email_schedules")
    .set({ next_run_at: new Date(Date.now() - 1000) })
    .where("id", "=", id)
    .execute();
}

async function scheduleOf(auth: Auth, id: number) {
  const res = await t.request().get("/api/v1/email-schedules").set(auth).expect(200);
  return (res.body.data as { id: number }[]).find((s) => s.id === id) as Record<string, unknown> & {
    id: number;
  };
}

async function creditsOf(auth: Auth): Promise<number> {
  const res = await t.request().get("/api/v1/me").set(auth).expect(200);
  return res.body.data.totalCreditsRemaining as number;
}

async function chargesOf(accountId: number) {
  return t.ctx.db
    .selectFrom("credit_ledger")
    .select(["reason", "reference", "amount_tenths"])
    .where("account_id", "=", accountId)
    .where("amount_tenths", "<", 0)
    .orderBy("id")
    .execute();
}

/** Leaves the account `credits` spendable credits. */
async function spendDownTo(auth: Auth, accountId: number, credits: number): Promise<void> {
  const spend = (await creditsOf(auth)) - credits;
  await t.ctx.db.transaction().execute(async (trx) => {
    const { periodStart } = await lockAccountCredits(trx, accountId);
    await chargeCredits(trx, {
      accountId,
      periodStart,
      tenths: spend * 10,
      reason: "test",
      reference: "spend",
    });
  });
}

const mailsTo = (to: string) => smtp.messages.filter((m) => m.to.includes(to));

async function mailTo(to: string, n = 1): Promise<ReceivedMail> {
  await smtp.waitFor(() => mailsTo(to).length >= n, 10_000);
  return mailsTo(to)[n - 1]!;
}

const address = (name: string) => `${name}-${uniqueWord("m")}@example.com`;
const companies = (rows: Record<string, unknown>[]) => rows.map((r) => r.companyName);

afterEach(async () => {
  // A test that failed halfway leaves no schedule due for the next one.
  await t.ctx.db
    .updateTable("email_schedules")
    .set({ next_run_at: new Date(Date.now() + 86_400_000) })
    .execute();
});

describe("the runner: full copy", () => {
  it("e-mails every recipient the new leads, charges them once, records the histories, then only newer leads", async () => {
    const account = await buildAccount(t.ctx.db);
    const word = uniqueWord("fc");
    await wordLeads(word, 3);
    // A lead of a blacklisted domain is never sent.
    await buildLeads(t.ctx.db, 1, () => ({
      company_name: `${word} Blocked`,
      registered_url: "https://shop.blocked-domain.example",
    }));
    await t
      .request()
      .post("/api/v1/export-blacklist")
      .set(account.auth)
      .send({ entries: [{ entryType: "domain", value: "blocked-domain.example" }] })
      .expect(201);
    const [ann, bob] = [address("ann"), address("bob")];
    const before = await creditsOf(account.auth);
    const schedule = await createSchedule(account.auth, {
      name: "Plumbers",
      filterPresetId: await createPreset(account.auth, word),
      intervalValue: 1,
      recipients: [{ email: ann }, { email: bob }],
    });
    await makeDue(schedule.id);
    expect(await runDueSchedules(runnerDeps())).toBe(1);

    for (const to of [ann, bob]) {
      const mail = await mailTo(to);
      expect(mail.subject).toBe("Plumbers: 3 new lead(s)");
      const files = attachmentsOf(mail.raw);
      expect(files.map((f) => f.filename)).toEqual([
        `leads-main-${new Date().toISOString().slice(0, 10)}.csv`,
      ]);
      const rows = csvRecords(files[0]!.content);
      expect(companies(rows)).toEqual([`${word} Company 2`, `${word} Company 1`, `${word} Company 0`]);
    }
    expect(await creditsOf(account.auth)).toBe(before - 3);
    const history = await t
      .request()
      .get("/api/v1/lead-export-history")
      .query({ exportMethod: "email_schedule" })
      .set(account.auth)
      .expect(200);
    expect(history.body.totalCount).toBe(3);
    const files = await t.request().get("/api/v1/export-history").set(account.auth).expect(200);
    expect(files.body.data).toHaveLength(1);
    expect(files.body.data[0]).toMatchObject({ leadCount: 3, fileType: "csv" });

    const after = await scheduleOf(account.auth, schedule.id);
    expect(after).toMatchObject({ totalSentCount: 3, isActive: true, pauseReason: null });
    expect(after.lastSentAt).toEqual(after.lastSent);
    expect(Date.parse(after.nextRunAt as string)).toBeGreaterThan(Date.now() + 23 * 3600_000);

    // Nothing new: the next run sends nothing.
    await makeDue(schedule.id);
    await runDueSchedules(runnerDeps());
    // A new lead: only it is sent.
    await wordLeads(word, 1, 10);
    await makeDue(schedule.id);
    await runDueSchedules(runnerDeps());
    const second = await mailTo(ann, 2);
    expect(companies(csvRecords(attachmentsOf(second.raw)[0]!.content))).toEqual([`${word} Company 10`]);
    expect(mailsTo(ann)).toHaveLength(2);
    expect(await creditsOf(account.auth)).toBe(before - 4);
    expect((await scheduleOf(account.auth, schedule.id)).totalSentCount).toBe(4);
  });

  it("emits email_schedule.sent and lead.created through the outbox", async () => {
    const account = await buildAccount(t.ctx.db);
    const word = uniqueWord("ev");
    const ids = await wordLeads(word, 2);
    await t
      .request()
      .post("/api/v1/integrations/webhook")
      .set(account.auth)
      .send({
        provider: "generic_webhook",
        displayName: "Hook",
        targetUrl: "https://hooks.example.com/in",
        events: ["email_schedule.sent", "lead.created"],
      })
      .expect(201);
    const schedule = await createSchedule(account.auth, {
      name: "Events",
      filterPresetId: await createPreset(account.auth, word),
      intervalValue: 1,
      recipients: [{ email: address("ev") }],
    });
    await makeDue(schedule.id);
    await runDueSchedules(runnerDeps());
    const events = await t.ctx.db
      .selectFrom("event_outbox")
      .select(["event_type", "data", "lead_refs"])
      .where("account_id", "=", account.accountId)
      .orderBy("id")
      .execute();
    const sent = events.find((e) => e.event_type === "email_schedule.sent");
    expect(sent?.data).toMatchObject({
      scheduleId: schedule.id,
      scheduleName: "Events",
      leadCount: 2,
      creditsUsed: 2,
      recipientCount: 1,
    });
    const created = events.find((e) => e.event_type === "lead.created");
    expect(JSON.stringify(created?.lead_refs)).toContain(String(ids[0]));
  });
});

describe("the runner: a preset made from a dashboard hash", () => {
  it("runs the hash's search, with its keyword lists as they are at each send", async () => {
    const account = await buildAccount(t.ctx.db);
    const [word, other, excluded] = [uniqueWord("hp"), uniqueWord("ho"), uniqueWord("hx")];
    await wordLeads(word, 2);
    await buildLeads(t.ctx.db, 1, () => ({
      company_name: `${word} ${excluded} Supplies`,
      registered_url: `https://${excluded}.example.org`,
    }));
    const list = async (type: string, keywords: string[]) =>
      (
        await t
          .request()
          .post("/api/v1/keyword-lists")
          .set(account.auth)
          .send({ name: type, type, keywords })
          .expect(201)
      ).body.data.id as number;
    const positive = await list("positive", [word]);
    const negative = await list("negative", [excluded]);
    const preset = await t
      .request()
      .post("/api/v1/filter-presets")
      .set(account.auth)
      .send({ name: "hash", filters: { hash: `#nkl=${positive}&dkl=${negative}` } })
      .expect(201);
    const to = address("hash");
    const schedule = await createSchedule(account.auth, {
      name: "Hash",
      filterPresetId: preset.body.data.id,
      intervalValue: 1,
      recipients: [{ email: to }],
    });
    await makeDue(schedule.id);
    expect(await runDueSchedules(runnerDeps())).toBe(1);
    const first = await mailTo(to);
    expect(companies(csvRecords(attachmentsOf(first.raw)[0]!.content))).toEqual([
      `${word} Company 1`,
      `${word} Company 0`,
    ]);

    // The positive list now holds another word: the next send follows it.
    await t
      .request()
      .put(`/api/v1/keyword-lists/${positive}`)
      .set(account.auth)
      .send({ keywords: [other] })
      .expect(200);
    await wordLeads(word, 1, 10);
    await wordLeads(other, 1, 20);
    await makeDue(schedule.id);
    await runDueSchedules(runnerDeps());
    const second = await mailTo(to, 2);
    expect(companies(csvRecords(attachmentsOf(second.raw)[0]!.content))).toEqual([`${other} Company 20`]);

    // Its only positive list deleted: the preset searches nothing, so nothing is sent.
    await t.request().delete(`/api/v1/keyword-lists/${positive}`).set(account.auth).expect(200);
    await wordLeads(other, 1, 30);
    await makeDue(schedule.id);
    await runDueSchedules(runnerDeps());
    const trigger = await t
      .request()
      .post(`/api/v1/email-schedules/${schedule.id}/trigger`)
      .set(account.auth);
    expect([trigger.status, trigger.body.error]).toEqual([400, "bad_request"]);
    await new Promise((r) => setTimeout(r, 300));
    expect(mailsTo(to)).toHaveLength(2);
    expect((await scheduleOf(account.auth, schedule.id)).totalSentCount).toBe(3);
  });
});

describe("the runner: split evenly", () => {
  it("gives each recipient a unique share by weight, and full-copy recipients every lead", async () => {
    const account = await buildAccount(t.ctx.db);
    const word = uniqueWord("se");
    await wordLeads(word, 6);
    const [ann, bob, boss] = [address("ann"), address("bob"), address("boss")];
    const schedule = await createSchedule(account.auth, {
      name: "Reps",
      filterPresetId: await createPreset(account.auth, word),
      intervalValue: 1,
      distributionMode: "split_evenly",
      recipients: [{ email: ann, splitParts: 2 }, { email: bob }],
      fullCopyRecipients: [boss],
    });
    await makeDue(schedule.id);
    await runDueSchedules(runnerDeps());
    const rowsOf = async (to: string) => {
      const files = attachmentsOf((await mailTo(to)).raw);
      expect(files).toHaveLength(1);
      return companies(csvRecords(files[0]!.content));
    };
    const annRows = await rowsOf(ann);
    const bobRows = await rowsOf(bob);
    const bossRows = await rowsOf(boss);
    expect(annRows).toEqual([5, 4, 3, 2].map((i) => `${word} Company ${i}`));
    expect(bobRows).toEqual([1, 0].map((i) => `${word} Company ${i}`));
    expect(bossRows).toEqual([...annRows, ...bobRows]);
    // Each lead is charged once, whoever got it.
    expect((await chargesOf(account.accountId)).map((c) => c.amount_tenths)).toEqual([-60]);
  });

  it("sends the combined file with the assignee and file-name columns (XLSX)", async () => {
    const account = await buildAccount(t.ctx.db);
    const word = uniqueWord("cf");
    await wordLeads(word, 3);
    const format = await t
      .request()
      .post("/api/v1/export-formats")
      .set(account.auth)
      .send({
        name: "Sheet",
        fileType: "xlsx",
        fieldMappings: [{ sourceField: "companyName", exportName: "Company", type: "field" }],
      })
      .expect(201);
    const [ann, bob, ops] = [address("ann"), address("bob"), address("ops")];
    const schedule = await createSchedule(account.auth, {
      name: "Combined",
      filterPresetId: await createPreset(account.auth, word),
      exportFormatId: format.body.data.id,
      intervalValue: 1,
      distributionMode: "split_evenly",
      recipients: [{ email: ann }, { email: bob }],
      combinedFileEnabled: true,
      combinedRecipients: [ops],
      combinedColumnsPosition: "beginning",
    });
    await makeDue(schedule.id);
    await runDueSchedules(runnerDeps());
    const annFiles = attachmentsOf((await mailTo(ann)).raw);
    const annName = annFiles[0]!.filename;
    expect(annName).toMatch(/^leads-main-ann-.*\.xlsx$/);
    expect((await xlsxRecords(annFiles[0]!.content)).map((r) => r.Company)).toEqual([
      `${word} Company 2`,
      `${word} Company 1`,
    ]);
    const bobName = attachmentsOf((await mailTo(bob)).raw)[0]!.filename;
    const combined = attachmentsOf((await mailTo(ops)).raw);
    expect(combined.map((f) => f.filename)).toEqual([
      `leads-main-combined-${new Date().toISOString().slice(0, 10)}.xlsx`,
    ]);
    const rows = await xlsxRecords(combined[0]!.content);
    expect(rows).toEqual([
      { "Assigned To": ann, "File Part": annName, Company: `${word} Company 2` },
      { "Assigned To": ann, "File Part": annName, Company: `${word} Company 1` },
      { "Assigned To": bob, "File Part": bobName, Company: `${word} Company 0` },
    ]);
    expect(Object.keys(rows[0]!)).toEqual(["Assigned To", "File Part", "Company"]);
  });
});

describe("the runner: a format that splits files", () => {
  it("attaches every part; the combined file names each lead's part, with the format's headers, at the end", async () => {
    const account = await buildAccount(t.ctx.db);
    const word = uniqueWord("sp");
    await wordLeads(word, 12);
    const format = await t
      .request()
      .post("/api/v1/export-formats")
      .set(account.auth)
      .send({
        name: "Parts",
        fileType: "csv",
        fieldMappings: [{ sourceField: "companyName", exportName: "Company", type: "field" }],
        splitFiles: true,
        splitMode: "max_rows",
        maxRowsPerFile: 10,
        combinedAssigneeColumnName: "Rep",
        combinedFileNameColumnName: "Sheet",
      })
      .expect(201);
    const [ann, ops] = [address("ann"), address("ops")];
    const schedule = await createSchedule(account.auth, {
      name: "Parts",
      filterPresetId: await createPreset(account.auth, word),
      exportFormatId: format.body.data.id,
      intervalValue: 1,
      recipients: [{ email: ann }],
      combinedFileEnabled: true,
      combinedRecipients: [ops, ann],
    });
    await makeDue(schedule.id);
    await runDueSchedules(runnerDeps());
    const day = new Date().toISOString().slice(0, 10);
    // Ann is a recipient and a combined recipient: one e-mail with the parts and the combined file.
    const files = attachmentsOf((await mailTo(ann)).raw);
    expect(files.map((f) => f.filename)).toEqual([
      `leads-main-${day}_part1.csv`,
      `leads-main-${day}_part2.csv`,
      `leads-main-combined-${day}.csv`,
    ]);
    expect(csvRecords(files[0]!.content)).toHaveLength(10);
    expect(csvRecords(files[1]!.content)).toHaveLength(2);
    const combined = csvRecords(files[2]!.content);
    expect(Object.keys(combined[0]!)).toEqual(["Company", "Rep", "Sheet"]);
    expect(combined.map((r) => r.Sheet)).toEqual([
      ...Array<string>(10).fill(`leads-main-${day}_part1.csv`),
      `leads-main-${day}_part2.csv`,
      `leads-main-${day}_part2.csv`,
    ]);
    expect(new Set(combined.map((r) => r.Rep))).toEqual(new Set([ann]));
    expect(attachmentsOf((await mailTo(ops)).raw).map((f) => f.filename)).toEqual([
      `leads-main-combined-${day}.csv`,
    ]);
    await new Promise((r) => setTimeout(r, 300));
    expect(mailsTo(ann)).toHaveLength(1);
  });
});

describe("the runner: JSON", () => {
  it("writes the combined JSON file with typed extra members; full copy names all recipients", async () => {
    const account = await buildAccount(t.ctx.db);
    const word = uniqueWord("js");
    await wordLeads(word, 3);
    const format = await t
      .request()
      .post("/api/v1/export-formats")
      .set(account.auth)
      .send({
        name: "Json",
        fileType: "json",
        fieldMappings: [{ sourceField: "companyName", exportName: "company", type: "field" }],
        splitFiles: true,
        splitMode: "equal_parts",
        numberOfParts: 2,
      })
      .expect(201);
    const [ann, bob, ops] = [address("ann"), address("bob"), address("ops")];
    const schedule = await createSchedule(account.auth, {
      name: "Json",
      filterPresetId: await createPreset(account.auth, word),
      exportFormatId: format.body.data.id,
      intervalValue: 1,
      recipients: [{ email: ann }, { email: bob }],
      combinedFileEnabled: true,
      combinedRecipients: [ops],
    });
    await makeDue(schedule.id);
    await runDueSchedules(runnerDeps());
    const day = new Date().toISOString().slice(0, 10);
    const parts = attachmentsOf((await mailTo(bob)).raw);
    expect(parts.map((f) => f.filename)).toEqual([
      `leads-main-${day}_part1.json`,
      `leads-main-${day}_part2.json`,
    ]);
    const combined = attachmentsOf((await mailTo(ops)).raw);
    expect(JSON.parse(combined[0]!.content.toString("utf8"))).toEqual([
      {
        company: `${word} Company 2`,
        "Assigned To": "all recipients",
        "File Part": `leads-main-${day}_part1.json`,
      },
      {
        company: `${word} Company 1`,
        "Assigned To": "all recipients",
        "File Part": `leads-main-${day}_part1.json`,
      },
      {
        company: `${word} Company 0`,
        "Assigned To": "all recipients",
        "File Part": `leads-main-${day}_part2.json`,
      },
    ]);
  });
});

describe("the runner: reservoir, first-run cap, credits", () => {
  it("keeps the new leads over maxLeadsPerEmail in the reservoir and sends them first next time", async () => {
    const account = await buildAccount(t.ctx.db);
    const word = uniqueWord("rv");
    await wordLeads(word, 5);
    const to = address("rv");
    const schedule = await createSchedule(account.auth, {
      name: "Capped",
      filterPresetId: await createPreset(account.auth, word),
      intervalValue: 1,
      maxLeadsPerEmail: 2,
      recipients: [{ email: to }],
    });
    const sent: unknown[][] = [];
    for (let n = 1; n <= 3; n += 1) {
      if (n === 3) await wordLeads(word, 1, 20);
      await makeDue(schedule.id);
      await runDueSchedules(runnerDeps());
      sent.push(companies(csvRecords(attachmentsOf((await mailTo(to, n)).raw)[0]!.content)));
    }
    expect(sent).toEqual([
      [`${word} Company 4`, `${word} Company 3`],
      [`${word} Company 2`, `${word} Company 1`],
      // The reservoir first, then the lead that arrived since.
      [`${word} Company 0`, `${word} Company 20`],
    ]);
  });

  it("the first run sends at most the 10,000 newest matches; older ones are never sent", async () => {
    const account = await buildAccount(t.ctx.db, { plan: "platinum" });
    const word = uniqueWord("cap");
    await sql`
      insert into leads (external_id, company_name, registered_url, last_updated)
      select ${word} || '-' || g, ${word} || ' Company ' || g, 'https://' || ${word} || '-' || g || '.example.org',
        timestamptz '2026-01-01' + g * interval '1 minute'
      from generate_series(1, 10005) g`.execute(t.ctx.db);
    const to = address("cap");
    const schedule = await createSchedule(account.auth, {
      name: "Big",
      filterPresetId: await createPreset(account.auth, word),
      intervalValue: 1,
      recipients: [{ email: to }],
    });
    await makeDue(schedule.id);
    await runDueSchedules(runnerDeps());
    const rows = csvRecords(attachmentsOf((await mailTo(to)).raw)[0]!.content);
    expect(rows).toHaveLength(10_000);
    expect(rows[0]!.companyName).toBe(`${word} Company 10005`);
    expect(rows.at(-1)!.companyName).toBe(`${word} Company 6`);
    await makeDue(schedule.id);
    await runDueSchedules(runnerDeps());
    expect((await scheduleOf(account.auth, schedule.id)).totalSentCount).toBe(10_000);
    expect(mailsTo(to)).toHaveLength(1);
  }, 60_000);

  it("pauses with insufficient_credits after sending what the balance pays, and tells the owner", async () => {
    const owner = address("owner");
    const account = await buildAccount(t.ctx.db, { email: owner, plan: "starter" });
    const word = uniqueWord("cr");
    await wordLeads(word, 5);
    await spendDownTo(account.auth, account.accountId, 2);
    const to = address("cr");
    const schedule = await createSchedule(account.auth, {
      name: "Broke",
      filterPresetId: await createPreset(account.auth, word),
      intervalValue: 1,
      recipients: [{ email: to }],
    });
    await makeDue(schedule.id);
    await runDueSchedules(runnerDeps());
    const rows = csvRecords(attachmentsOf((await mailTo(to)).raw)[0]!.content);
    expect(companies(rows)).toEqual([`${word} Company 4`, `${word} Company 3`]);
    expect(await creditsOf(account.auth)).toBe(0);
    const notice = await mailTo(owner);
    expect(notice.subject).toBe('E-mail schedule "Broke" paused: not enough credits');
    expect(await scheduleOf(account.auth, schedule.id)).toMatchObject({
      isActive: false,
      pauseReason: "insufficient_credits",
      nextRunAt: null,
      totalSentCount: 2,
    });
    // Paused: not due, nothing more is sent.
    await runDueSchedules(runnerDeps());
    expect(mailsTo(to)).toHaveLength(1);
  });
});

describe("the runner: attachments too large", () => {
  it("sends a signed download link instead, which serves the file", async () => {
    const account = await buildAccount(t.ctx.db);
    const word = uniqueWord("lk");
    await wordLeads(word, 2);
    const to = address("lk");
    const schedule = await createSchedule(account.auth, {
      name: "Links",
      filterPresetId: await createPreset(account.auth, word),
      intervalValue: 1,
      recipients: [{ email: to }],
    });
    await makeDue(schedule.id);
    await runDueSchedules(runnerDeps(100));
    const mail = await mailTo(to);
    expect(attachmentsOf(mail.raw)).toEqual([]);
    const link = /http:\/\/files\.test(\/api\/v1\/files\/\S+)/.exec(mail.text)?.[1];
    expect(link).toBeDefined();
    const res = await t.request().get(link!).buffer(true).expect(200);
    expect(companies(csvRecords(Buffer.from(res.text)))).toEqual([`${word} Company 1`, `${word} Company 0`]);
  });
});

describe("POST /email-schedules/{id}/trigger", () => {
  it("sends now under the job protocol; the same Idempotency-Key replays the answer and sends nothing", async () => {
    const account = await buildAccount(t.ctx.db);
    const word = uniqueWord("tr");
    await wordLeads(word, 2);
    const to = address("tr");
    const schedule = await createSchedule(account.auth, {
      name: "Now",
      filterPresetId: await createPreset(account.auth, word),
      intervalValue: 1,
      recipients: [{ email: to }],
    });
    const before = await scheduleOf(account.auth, schedule.id);
    const send = () =>
      t
        .request()
        .post(`/api/v1/email-schedules/${schedule.id}/trigger`)
        .set(account.auth)
        .set("Idempotency-Key", `trigger-${schedule.id}-key`);
    const first = await send().expect(200);
    expect(first.body.data).toEqual({
      sent: true,
      leadCount: 2,
      creditsUsed: 2,
      recipients: 1,
      message: "Sent 2 lead(s) to 1 address(es).",
    });
    expect(first.headers["x-svc-job-id"]).toEqual(expect.any(String));
    const replay = await send().expect(200);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers["x-svc-job-id"]).toBe(first.headers["x-svc-job-id"]);
    await mailTo(to);
    await new Promise((r) => setTimeout(r, 300));
    expect(mailsTo(to)).toHaveLength(1);
    expect((await chargesOf(account.accountId)).map((c) => c.amount_tenths)).toEqual([-20]);
    const after = await scheduleOf(account.auth, schedule.id);
    expect(after).toMatchObject({ totalSentCount: 2, nextRunAt: before.nextRunAt });

    // Nothing new since: a new trigger sends nothing.
    const again = await t
      .request()
      .post(`/api/v1/email-schedules/${schedule.id}/trigger`)
      .set(account.auth)
      .expect(200);
    expect(again.body.data).toMatchObject({ sent: false, leadCount: 0, creditsUsed: 0 });
  });

  it("answers 202 with a job when asked to, and the job's answer when polled", async () => {
    const account = await buildAccount(t.ctx.db);
    const word = uniqueWord("as");
    await wordLeads(word, 1);
    const to = address("as");
    const schedule = await createSchedule(account.auth, {
      name: "Async",
      filterPresetId: await createPreset(account.auth, word),
      intervalValue: 1,
      recipients: [{ email: to }],
    });
    const accepted = await t
      .request()
      .post(`/api/v1/email-schedules/${schedule.id}/trigger`)
      .set(account.auth)
      .set("Prefer", "respond-async")
      .expect(202);
    expect(accepted.body).toMatchObject({ status: "running", kind: "email_schedule_trigger" });
    const done = await t
      .request()
      .get(`/api/v1/jobs/${accepted.body.jobId}`)
      .set(account.auth)
      .set("Prefer", "wait=30")
      .expect(200);
    expect(done.body.data).toMatchObject({ sent: true, leadCount: 1, creditsUsed: 1, recipients: 1 });
    await mailTo(to);
  });

  it("409 schedule_run_in_progress while its regular run sends it: nothing sent", async () => {
    const account = await buildAccount(t.ctx.db);
    const word = uniqueWord("ip");
    const ids = await wordLeads(word, 2);
    const to = address("ip");
    const schedule = await createSchedule(account.auth, {
      name: "Busy",
      filterPresetId: await createPreset(account.auth, word),
      intervalValue: 1,
      recipients: [{ email: to }],
    });
    // The regular run waits for a delivery of the same leads to the account (held open here).
    const held = await holdEntries(t.ctx.db, account.accountId, ids);
    await makeDue(schedule.id);
    const regular = runDueSchedules(runnerDeps());
    await expect
      .poll(async () => (await scheduleOf(account.auth, schedule.id)) && claimOf(schedule.id), {
        timeout: 5000,
      })
      .not.toBeNull();
    const res = await t
      .request()
      .post(`/api/v1/email-schedules/${schedule.id}/trigger`)
      .set(account.auth)
      .set("Idempotency-Key", `busy-${schedule.id}-key`);
    expect(res.status).toBe(409);
    expect(res.body.error).toBe("schedule_run_in_progress");
    await held.rollback();
    await regular;
    await mailTo(to);
    await new Promise((r) => setTimeout(r, 300));
    expect(mailsTo(to)).toHaveLength(1);
  });

  it("400 when paused or its preset is gone; 404 for another account's schedule", async () => {
    const account = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const presetId = await createPreset(account.auth, uniqueWord("pz"));
    const paused = await createSchedule(account.auth, {
      name: "P",
      filterPresetId: presetId,
      intervalValue: 1,
      isActive: false,
    });
    const res = await t.request().post(`/api/v1/email-schedules/${paused.id}/trigger`).set(account.auth);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("bad_request");
    const orphan = await createSchedule(account.auth, {
      name: "O",
      filterPresetId: presetId,
      intervalValue: 1,
    });
    await t.request().delete(`/api/v1/filter-presets/${presetId}`).set(account.auth).expect(200);
    const gone = await t.request().post(`/api/v1/email-schedules/${orphan.id}/trigger`).set(account.auth);
    expect(gone.status).toBe(400);
    expect(gone.body.error).toBe("bad_request");
    const foreign = await t.request().post(`/api/v1/email-schedules/${orphan.id}/trigger`).set(other.auth);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toBe("not_found");
  });
});

describe("limits", () => {
  it("a trigger counts against the export rate limit (5 per minute per key)", async () => {
    const account = await buildAccount(t.ctx.db);
    const schedule = await createSchedule(account.auth, {
      name: "Empty",
      filterPresetId: await createPreset(account.auth, uniqueWord("rl")),
      intervalValue: 1,
      recipients: [{ email: address("rl") }],
    });
    const trigger = () =>
      t.request().post(`/api/v1/email-schedules/${schedule.id}/trigger`).set(account.auth);
    for (let i = 0; i < 5; i += 1) {
      const res = await trigger().expect(200);
      expect(res.body.data).toMatchObject({ sent: false, leadCount: 0 });
    }
    const limited = await trigger();
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe("Rate limit exceeded");
  });

  it("a regular run whose preset was deleted skips its interval and sends nothing", async () => {
    const account = await buildAccount(t.ctx.db);
    const word = uniqueWord("dp");
    await wordLeads(word, 1);
    const presetId = await createPreset(account.auth, word);
    const schedule = await createSchedule(account.auth, {
      name: "Orphan",
      filterPresetId: presetId,
      intervalValue: 2,
      intervalUnit: "hours",
      recipients: [{ email: address("dp") }],
    });
    await t.request().delete(`/api/v1/filter-presets/${presetId}`).set(account.auth).expect(200);
    await makeDue(schedule.id);
    expect(await runDueSchedules(runnerDeps())).toBe(0);
    const after = await scheduleOf(account.auth, schedule.id);
    expect(after).toMatchObject({ isActive: true, totalSentCount: 0, lastSentAt: null });
    expect(Date.parse(after.nextRunAt as string)).toBeGreaterThan(Date.now() + 3600_000);
    expect(await claimOf(schedule.id)).toBeNull();
  });

  it("the runner skips the schedules of an account without a paid subscription", async () => {
    const account = await buildAccount(t.ctx.db);
    const word = uniqueWord("cx");
    await wordLeads(word, 1);
    const to = address("cx");
    const schedule = await createSchedule(account.auth, {
      name: "Canceled",
      filterPresetId: await createPreset(account.auth, word),
      intervalValue: 1,
      recipients: [{ email: to }],
    });
    await t.ctx.db
      .updateTable("accounts")
      .set({ subscription_status: "canceled" })
      .where("id", "=", account.accountId)
      .execute();
    await makeDue(schedule.id);
    expect(await runDueSchedules(runnerDeps())).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    expect(mailsTo(to)).toHaveLength(0);
    expect(await chargesOf(account.accountId)).toEqual([]);
  });
});

async function claimOf(id: number): Promise<Date | null> {
  const row = await t.ctx.db
    .selectFrom("email_schedules")
    .select("run_claimed_at")
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
  return row.run_claimed_at;
}

describe("the runner: workers", () => {
  it("two workers on one database send each run once", async () => {
    const account = await buildAccount(t.ctx.db);
    const schedules: { id: number; to: string }[] = [];
    for (let i = 0; i < 4; i += 1) {
      const word = uniqueWord("tw");
      await wordLeads(word, 2);
      const to = address(`tw${i}`);
      const s = await createSchedule(account.auth, {
        name: `S${i}`,
        filterPresetId: await createPreset(account.auth, word),
        intervalValue: 1,
        recipients: [{ email: to }],
      });
      await makeDue(s.id);
      schedules.push({ id: s.id, to });
    }
    const [a, b] = await Promise.all([runDueSchedules(runnerDeps()), runDueSchedules(runnerDeps())]);
    expect(a + b).toBe(4);
    for (const s of schedules) await mailTo(s.to);
    await new Promise((r) => setTimeout(r, 300));
    for (const s of schedules) expect(mailsTo(s.to)).toHaveLength(1);
    expect((await chargesOf(account.accountId)).map((c) => c.amount_tenths)).toEqual([-20, -20, -20, -20]);
  });

  it("a worker killed halfway through a run sends no lead twice and charges none twice", async () => {
    const account = await buildAccount(t.ctx.db);
    const word = uniqueWord("kill");
    const ids = await wordLeads(word, 3);
    const to = address("kill");
    const before = await creditsOf(account.auth);
    const schedule = await createSchedule(account.auth, {
      name: "Killed",
      filterPresetId: await createPreset(account.auth, word),
      intervalValue: 1,
      recipients: [{ email: to }],
    });
    await makeDue(schedule.id);
    // The worker process stops in the run's transaction, waiting for these entries.
    const held = await holdEntries(t.ctx.db, account.accountId, ids);
    const child = startRunnerProcess(t.database.url, `${t.ctx.config.dataDir}/files`);
    try {
      await expect.poll(() => lockWaiters(), { timeout: 30_000, interval: 50 }).toBeGreaterThan(0);
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      await held.rollback();
    }
    expect(await chargesOf(account.accountId)).toEqual([]);
    // The dead worker's claim is taken over once its lease is over.
    await t.ctx.db
      .updateTable("email_schedules")
      .set({ run_claimed_at: new Date(Date.now() - 3600_000) })
      .where("id", "=", schedule.id)
      .execute();
    expect(await runDueSchedules(runnerDeps())).toBe(1);
    const rows = csvRecords(attachmentsOf((await mailTo(to)).raw)[0]!.content);
    expect(rows).toHaveLength(3);
    await new Promise((r) => setTimeout(r, 300));
    expect(mailsTo(to)).toHaveLength(1);
    expect((await chargesOf(account.accountId)).map((c) => c.amount_tenths)).toEqual([-30]);
    expect(await creditsOf(account.auth)).toBe(before - 3);
  }, 60_000);
});

async function lockWaiters(): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from pg_stat_activity
    where datname = current_database() and wait_event_type = 'Lock'`.execute(t.ctx.db);
  return rows[0]?.n ?? 0;
}

/** A separate process that runs the due schedules once (killed by the test). */
function startRunnerProcess(databaseUrl: string, filesDir: string) {
  const src = (path: string) => fileURLToPath(new URL(`../src/${path}`, import.meta.url));
  const code = `
    const { createDatabase } = await import(${JSON.stringify(src("db/database.ts"))});
    const { LocalDiskStorage } = await import(${JSON.stringify(src("storage/local-disk.ts"))});
    const { runDueSchedules } = await import(${JSON.stringify(src("email-schedules/run/runner.ts"))});
    const { pino } = await import("pino");
    const { db } = createDatabase(${JSON.stringify(databaseUrl)}, 4);
    await runDueSchedules({
      db,
      storage: new LocalDiskStorage(${JSON.stringify(filesDir)}),
      signer: { signingSecret: "x".repeat(32), publicBaseUrl: "http://files.test" },
      attachmentLimitBytes: 15 * 1024 * 1024,
      logger: pino({ level: "silent" }),
    });
  `;
  return spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], {
    stdio: ["ignore", "ignore", "inherit"],
    cwd: fileURLToPath(new URL("..", import.meta.url)),
  });
}
