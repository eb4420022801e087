import { run, type Runner } from "graphile-worker";
import { pino } from "pino";
import { afterAll, beforeAll } from "vitest";
import { workerLogger } from "../../src/jobs/runtime.js";
import { createMailer } from "../../src/mail/mailer.js";
import { MAIL_TASK } from "../../src/mail/queue.js";
import { mailSendTask } from "../../src/mail/task.js";
import type { TestApp } from "./app.js";

/**
 * Sends the test app's queued mails for the whole file with the mail adapter as deployed without
 * SMTP_URL: each becomes an .eml file under `DATA_DIR/mail`.
 */
export function useMailRunner(t: TestApp): void {
  let runner: Runner | undefined;
  beforeAll(async () => {
    const silent = pino({ level: "silent" });
    const mailer = createMailer({
      smtpUrl: undefined,
      dataDir: t.ctx.config.dataDir,
      from: "Lead Service <no-reply@localhost>",
      logger: silent,
    });
    await t.ctx.jobs.ensureQueue();
    runner = await run({
      pgPool: t.ctx.pool,
      concurrency: 2,
      noHandleSignals: true,
      pollInterval: 100,
      taskList: { [MAIL_TASK]: mailSendTask(mailer) },
      logger: workerLogger(silent),
    });
  });
  afterAll(async () => {
    await runner?.stop();
  });
}

export { mailsTo, tokenOf, waitForSignInLink } from "./mail-files.js";
