import { readdir, readFile } from "node:fs/promises";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { run, type Runner } from "graphile-worker";
import { sql } from "kysely";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workerLogger } from "../src/jobs/runtime.js";
import { createMailer, type Mailer } from "../src/mail/mailer.js";
import type { MailMessage } from "../src/mail/message.js";
import { enqueueMail, MAIL_TASK } from "../src/mail/queue.js";
import { mailSendTask } from "../src/mail/task.js";
import { useTestApp } from "./helpers/app.js";
import { startSmtpServer, type TestSmtpServer } from "./helpers/smtp.js";

// The mail adapter end to end: a real SMTP round trip to a local server, the .eml files written
// without SMTP_URL, and the mail__send job run by graphile-worker (queued in a transaction,
// retried when the relay is down).

const t = useTestApp();
const silent = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
const FROM = "Lead Service <no-reply@example.test>";

let smtp: TestSmtpServer;
beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await smtp?.close();
});

/** A mail with a subject unique to the test, so tests sharing the server cannot see each other's. */
function mail(subject: string, overrides: Partial<MailMessage> = {}): MailMessage {
  return { to: "owner@example.com", subject, text: `Body of ${subject}`, ...overrides };
}

/** Polls `read` until it returns a value (every 50 ms), failing after `timeoutMs`. */
async function until<T>(read: () => Promise<T | undefined>, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The mail__send job queued under a job key (graphile_worker.jobs does not show payloads). */
async function queuedJob(key: string) {
  const { rows } = await sql<{
    attempts: number;
    max_attempts: number;
    last_error: string | null;
    run_at: Date;
  }>`
    select attempts, max_attempts, last_error, run_at from graphile_worker.jobs
    where task_identifier = ${MAIL_TASK} and key = ${key}`.execute(t.ctx.db);
  return rows[0];
}

/** A graphile-worker runner with only the mail task, on the test database. */
function startMailRunner(mailer: Mailer): Promise<Runner> {
  return run({
    pgPool: t.ctx.pool,
    taskList: { [MAIL_TASK]: mailSendTask(mailer) },
    noHandleSignals: true,
    pollInterval: 200,
    concurrency: 2,
    logger: workerLogger(silent),
  });
}

describe("createMailer", () => {
  it("delivers over SMTP with SMTP_URL: sender, recipient, subject and text (non-ASCII too)", async () => {
    const mailer = createMailer({
      smtpUrl: smtp.url,
      dataDir: t.ctx.config.dataDir,
      from: FROM,
      logger: silent,
    });
    const longLine = "Grüße aus Köln: ".repeat(8);
    await mailer.send(mail("Neue Leads für Sie – 3 neu", { text: `${longLine}\nzweite Zeile` }));
    await mailer.send(mail("With HTML", { to: "b@example.org", html: "<p>Rich <b>body</b></p>" }));
    await mailer.send(mail("Кириллица", { text: "Новые лиды для вас" }));
    mailer.close();

    const plain = await smtp.waitFor((m) => m.subject === "Neue Leads für Sie – 3 neu");
    expect(plain.from).toBe("no-reply@example.test");
    expect(plain.to).toEqual(["owner@example.com"]);
    expect(plain.text).toBe(`${longLine}\nzweite Zeile`);
    const rich = await smtp.waitFor((m) => m.subject === "With HTML");
    expect(rich.to).toEqual(["b@example.org"]);
    expect(rich.text).toBe("Body of With HTML");
    expect(rich.raw).toContain("text/html");
    // Mostly non-ASCII text: nodemailer chooses base64, which the helper decodes too.
    const cyrillic = await smtp.waitFor((m) => m.subject === "Кириллица");
    expect(cyrillic.raw).toContain("Content-Transfer-Encoding: base64");
    expect(cyrillic.text).toBe("Новые лиды для вас");
  });

  it("writes each message as an .eml file under DATA_DIR/mail/ without SMTP_URL", async () => {
    const dataDir = t.ctx.config.dataDir;
    const mailer = createMailer({ smtpUrl: undefined, dataDir, from: FROM, logger: silent });
    await mailer.send(mail("Written to disk", { to: "someone@example.net" }));
    mailer.close();

    const files = await readdir(join(dataDir, "mail"));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{6}\.\d{3}Z-[A-Za-z0-9._@-]+\.eml$/);
    const eml = await readFile(join(dataDir, "mail", files[0]!), "utf8");
    expect(eml).toMatch(/^To: someone@example\.net\r?$/m);
    expect(eml).toMatch(/^Subject: Written to disk\r?$/m);
    expect(eml).toMatch(/^From: Lead Service <no-reply@example\.test>\r?$/m);
    expect(eml).toContain("Body of Written to disk");
    expect(smtp.messages.some((m) => m.subject === "Written to disk")).toBe(false);
  });
});

describe("the mail__send job", () => {
  let mailer: Mailer;
  let runner: Runner;
  beforeAll(async () => {
    mailer = createMailer({ smtpUrl: smtp.url, dataDir: t.ctx.config.dataDir, from: FROM, logger: silent });
    runner = await startMailRunner(mailer);
  });
  afterAll(async () => {
    await runner?.stop();
    mailer?.close();
  });

  it("sends a mail queued in a committed transaction; a rolled-back one is never queued", async () => {
    await expect(
      t.ctx.db.transaction().execute(async (trx) => {
        await enqueueMail(trx, mail("Rolled back"), { jobKey: "mail-test:rolled-back" });
        throw new Error("rollback");
      }),
    ).rejects.toThrow("rollback");
    expect(await queuedJob("mail-test:rolled-back")).toBeUndefined();

    await t.ctx.db
      .transaction()
      .execute((trx) => enqueueMail(trx, mail("Committed"), { jobKey: "mail-test:committed" }));
    const received = await smtp.waitFor((m) => m.subject === "Committed");
    expect(received.to).toEqual(["owner@example.com"]);
    expect(received.text).toBe("Body of Committed");
    // A finished job is deleted by graphile-worker.
    await until(async () => ((await queuedJob("mail-test:committed")) ? undefined : true));
    expect(smtp.messages.map((m) => m.subject)).not.toContain("Rolled back");
  });

  it("queues with 12 attempts, waits for run_at, and keeps one pending mail per job key", async () => {
    const runAt = new Date(Date.now() + 500);
    await enqueueMail(t.ctx.db, mail("Summary 1"), { runAt, jobKey: "mail-test:summary" });
    await enqueueMail(t.ctx.db, mail("Summary 2"), { runAt, jobKey: "mail-test:summary" });
    const job = await queuedJob("mail-test:summary");
    expect(job?.max_attempts).toBe(12);
    expect(job?.run_at.getTime()).toBe(runAt.getTime());

    await smtp.waitFor((m) => m.subject === "Summary 2");
    expect(Date.now()).toBeGreaterThanOrEqual(runAt.getTime());
    await until(async () => ((await queuedJob("mail-test:summary")) ? undefined : true));
    expect(smtp.messages.map((m) => m.subject)).not.toContain("Summary 1");
  });

  it("drops a payload that is not a mail instead of retrying it", async () => {
    const { rows } = await sql<{ id: number }>`
      select id from graphile_worker.add_job(${MAIL_TASK}::text, '{"to": 5, "subject": "Broken"}'::json)
    `.execute(t.ctx.db);
    const id = rows[0]!.id;
    await until(async () => {
      const left = await sql`select 1 from graphile_worker.jobs where id = ${id}`.execute(t.ctx.db);
      return left.rows.length === 0 ? true : undefined;
    });
    expect(smtp.messages.map((m) => m.subject)).not.toContain("Broken");
  });
});

describe("the mail__send job with the SMTP relay down", () => {
  let mailer: Mailer;
  let runner: Runner;
  beforeAll(async () => {
    // A port that was just free and is now closed: connections are refused at once.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    mailer = createMailer({
      smtpUrl: `smtp://127.0.0.1:${port}`,
      dataDir: t.ctx.config.dataDir,
      from: FROM,
      logger: silent,
    });
    runner = await startMailRunner(mailer);
  });
  afterAll(async () => {
    await runner?.stop();
    mailer?.close();
  });

  it("fails the attempt so graphile-worker keeps the job and retries it later", async () => {
    await enqueueMail(t.ctx.db, mail("Relay down"), { jobKey: "mail-test:relay-down" });
    const job = await until(async () => {
      const row = await queuedJob("mail-test:relay-down");
      return row && row.attempts >= 1 && row.last_error ? row : undefined;
    });
    expect(job.last_error).toMatch(/ECONNREFUSED/);
    expect(job.run_at.getTime()).toBeGreaterThan(Date.now());
    expect(smtp.messages.map((m) => m.subject)).not.toContain("Relay down");
  });
});
