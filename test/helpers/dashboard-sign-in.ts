import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
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

/** The text of an .eml file with quoted-printable soft breaks and escapes undone. */
function decodeQuotedPrintable(text: string): string {
  return text
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** The mails written to `DATA_DIR/mail` for one address (the mail adapter without SMTP_URL). */
export async function mailsTo(dataDir: string, address: string): Promise<string[]> {
  const folder = join(dataDir, "mail");
  const files = await readdir(folder).catch(() => [] as string[]);
  const texts = await Promise.all(files.sort().map((f) => readFile(join(folder, f), "utf8")));
  const to = new RegExp(`^To: ${address.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\r?$`, "mi");
  return texts.filter((t) => to.test(t)).map(decodeQuotedPrintable);
}

/** The sign-in link (`<base>/sign-in#token=...`) of the newest sign-in mail to the address, once written. */
export async function waitForSignInLink(
  dataDir: string,
  address: string,
  known = 0,
  timeoutMs = 15_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const mails = await mailsTo(dataDir, address);
    if (mails.length > known) {
      const link = /(https?:\/\/\S+\/sign-in#token=[A-Za-z0-9_-]+)/.exec(mails[mails.length - 1]!)?.[1];
      if (!link) throw new Error("the sign-in mail has no link");
      return link;
    }
    if (Date.now() > deadline) throw new Error(`no sign-in mail to ${address}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The token of a sign-in link. */
export function tokenOf(link: string): string {
  return new URL(link).hash.replace(/^#token=/, "");
}
