import { run, type Runner } from "graphile-worker";
import { sql } from "kysely";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  OWNER_SUMMARY_TASK,
  recordOwnerNotice,
  SUMMARY_DELAY_SECONDS,
} from "../src/integrations/owner-notices.js";
import { integrationsOwnerSummary } from "../src/integrations/tasks/integrations__owner_summary.js";
import { workerLogger } from "../src/jobs/runtime.js";
import { createMailer, type Mailer } from "../src/mail/mailer.js";
import { mailSendTask } from "../src/mail/task.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount, buildKey } from "./helpers/factories.js";
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from "./helpers/smtp.js";

// The owner e-mails of integration changes made with an API key, over a real SMTP round trip:
// requests queue mail__send jobs, a graphile-worker runner sends them to a local SMTP server.

const t = useTestApp();
const silent = pino({ level: "silent" });
let smtp: TestSmtpServer;
let mailer: Mailer;
let runner: Runner;

beforeAll(async () => {
  smtp = await startSmtpServer();
  mailer = createMailer({
    smtpUrl: smtp.url,
    dataDir: t.ctx.config.dataDir,
    from: "Lead Service <no-reply@localhost>",
    logger: silent,
  });
  runner = await run({
    pgPool: t.ctx.pool,
    concurrency: 4,
    noHandleSignals: true,
    pollInterval: 100,
    taskList: {
      mail__send: mailSendTask(mailer),
      [OWNER_SUMMARY_TASK]: integrationsOwnerSummary({ db: t.ctx.db }),
    },
    logger: workerLogger(silent),
  });
});

afterAll(async () => {
  await runner?.stop();
  mailer?.close();
  await smtp?.close();
});

type Auth = { Authorization: string };

async function ownerOf(accountId: number) {
  const row = await t.ctx.db
    .selectFrom("accounts")
    .select("email")
    .where("id", "=", accountId)
    .executeTakeFirstOrThrow();
  return row.email;
}

async function keyOf(accountId: number) {
  return t.ctx.db
    .selectFrom("api_keys")
    .select(["key_prefix", "name"])
    .where("account_id", "=", accountId)
    .orderBy("id")
    .executeTakeFirstOrThrow();
}

async function create(auth: Auth, body: Record<string, unknown>) {
  const res = await t.request().post("/api/v1/integrations/webhook").set(auth).send(body).expect(201);
  return res.body.data as { integration: { id: number }; signingSecret: string };
}

async function patch(auth: Auth, id: number, body: Record<string, unknown>) {
  await t.request().patch(`/api/v1/integrations/${id}`).set(auth).send(body).expect(200);
}

async function noticesOf(accountId: number) {
  return t.ctx.db
    .selectFrom("integration_change_notices")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("id")
    .execute();
}

const mailsTo = (to: string) => smtp.messages.filter((m) => m.to.includes(to));

/** Waits for the `n`-th mail to an address (1-based). */
async function nthMailTo(to: string, n: number): Promise<ReceivedMail> {
  await smtp.waitFor(() => mailsTo(to).length >= n, 10_000);
  return mailsTo(to)[n - 1]!;
}

describe("owner e-mails of API-key changes", () => {
  it("mails the owner at creation: host only, key prefix and name, how to undo", async () => {
    const account = await buildAccount(t.ctx.db);
    const owner = await ownerOf(account.accountId);
    const key = await keyOf(account.accountId);
    const { integration, signingSecret } = await create(account.auth, {
      provider: "generic_webhook",
      displayName: "CRM bridge",
      targetUrl: "https://notify.example.com:8443/private/path?token=abc",
      events: ["lead.created", "export.completed"],
      apiKey: "header-key-do-not-mail",
    });
    const mail = await nthMailTo(owner, 1);
    expect(mail.subject).toMatch(/API key/);
    expect(mail.text).toContain("notify.example.com:8443");
    expect(mail.text).toContain(key.key_prefix);
    expect(mail.text).toContain(key.name);
    expect(mail.text).toContain("CRM bridge");
    expect(mail.text).toContain("lead.created");
    expect(mail.text).toContain("export.completed");
    expect(mail.text).toContain(`PATCH /api/v1/integrations/${integration.id}`);
    expect(mail.text).toContain(`DELETE /api/v1/integrations/${integration.id}`);
    for (const secret of [
      "/private/path",
      "token=abc",
      signingSecret,
      "header-key-do-not-mail",
      account.apiKey,
    ]) {
      expect(mail.raw).not.toContain(secret);
    }
  });

  it("mails a new destination, re-activated events and a re-enable; not a rename, a pause or a removal", async () => {
    const account = await buildAccount(t.ctx.db);
    const owner = await ownerOf(account.accountId);
    const second = await buildKey(t.ctx.db, account.accountId, "Zap key");
    const { integration } = await create(account.auth, {
      provider: "webhook_tool_a",
      displayName: "Flows",
      targetUrl: "https://flows.example.com/hook/1",
      events: ["lead.created"],
    });
    await nthMailTo(owner, 1);

    await patch(second.auth, integration.id, {
      subscriptions: [
        { eventType: "lead.created" },
        { eventType: "lead.updated", targetUrl: "https://other.example.net/x/y" },
      ],
    });
    const added = await nthMailTo(owner, 2);
    expect(added.text).toContain("New destination: other.example.net");
    expect(added.text).toContain("lead.updated to other.example.net");
    const secondKey = await t.ctx.db
      .selectFrom("api_keys")
      .select("key_prefix")
      .where("id", "=", second.keyId)
      .executeTakeFirstOrThrow();
    expect(added.text).toContain(secondKey.key_prefix);
    expect(added.text).toContain("Zap key");
    expect(added.raw).not.toContain("/x/y");

    // Nothing added: no notice.
    await patch(second.auth, integration.id, { displayName: "Renamed" });
    await patch(second.auth, integration.id, { status: "disabled" });
    await patch(second.auth, integration.id, {
      subscriptions: [
        { eventType: "lead.created" },
        { eventType: "lead.updated", targetUrl: "https://other.example.net/x/y", isActive: false },
      ],
    });
    expect(await noticesOf(account.accountId)).toHaveLength(2);

    await patch(second.auth, integration.id, {
      subscriptions: [
        { eventType: "lead.created" },
        { eventType: "lead.updated", targetUrl: "https://other.example.net/x/y" },
      ],
    });
    const reactivated = await nthMailTo(owner, 3);
    expect(reactivated.text).toContain("Events now delivered: lead.updated to other.example.net");
    expect(reactivated.text).not.toContain("New destination");

    await patch(second.auth, integration.id, { status: "connected" });
    const reEnabled = await nthMailTo(owner, 4);
    expect(reEnabled.text).toContain("Re-enabled: it was disabled and is connected again.");
    expect(await noticesOf(account.accountId)).toHaveLength(4);
  });

  it("combines the changes beyond 10 in an hour into one summary mail; alerts are mailed at once", async () => {
    const account = await buildAccount(t.ctx.db);
    const owner = await ownerOf(account.accountId);
    const ids: number[] = [];
    for (let i = 1; i <= 12; i += 1) {
      const { integration } = await create(account.auth, {
        provider: "generic_webhook",
        displayName: `Burst ${i}`,
        targetUrl: `https://burst${i}.example.com/secret/${i}`,
        events: ["lead.created"],
      });
      ids.push(integration.id);
    }
    await nthMailTo(owner, 10);
    const notices = await noticesOf(account.accountId);
    expect(notices).toHaveLength(12);
    expect(notices.filter((n) => n.mailed_at === null)).toHaveLength(2);

    // One summary job for the account, due after the delay.
    const jobKey = `${OWNER_SUMMARY_TASK}:${account.accountId}`;
    const { rows: jobs } = await sql<{ run_at: Date }>`
      select run_at from graphile_worker.jobs where key = ${jobKey}`.execute(t.ctx.db);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.run_at.getTime()).toBeGreaterThan(Date.now() + (SUMMARY_DELAY_SECONDS - 60) * 1000);

    // An alert does not wait and does not count.
    await t.ctx.db.transaction().execute((trx) =>
      recordOwnerNotice(trx, {
        accountId: account.accountId,
        kind: "alert",
        summary: `Integration #${ids[0]} moved to needs_attention after 5 failed deliveries.`,
      }),
    );
    const alert = await smtp.waitFor(
      (m) => m.to.includes(owner) && m.text.includes("needs_attention"),
      10_000,
    );
    expect(alert.subject).toMatch(/attention/);
    expect(await noticesOf(account.accountId)).toHaveLength(12);
    expect(mailsTo(owner)).toHaveLength(11);

    // The summary, made due now.
    await sql`select graphile_worker.add_job(${OWNER_SUMMARY_TASK}::text,
        json_build_object('accountId', ${account.accountId}::integer),
        job_key => ${jobKey}::text, job_key_mode => 'replace', run_at => now())`.execute(t.ctx.db);
    const summary = await smtp.waitFor((m) => m.to.includes(owner) && /2 changes/.test(m.subject), 10_000);
    expect(summary.text).toContain(`Integration #${ids[10]} "Burst 11"`);
    expect(summary.text).toContain(`Integration #${ids[11]} "Burst 12"`);
    expect(summary.text).toContain("burst12.example.com");
    expect(summary.text).not.toContain('Burst 10"');
    expect(summary.raw).not.toContain("/secret/");
    expect((await noticesOf(account.accountId)).filter((n) => n.mailed_at === null)).toEqual([]);
  });
});
