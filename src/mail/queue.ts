import { sql } from "kysely";
import type { DbOrTrx } from "../db/database.js";
import type { MailMessage } from "./message.js";

/** The graphile-worker task that sends one mail. */
export const MAIL_TASK = "mail__send";

/**
 * Attempts of one mail: graphile-worker waits e^attempt seconds (at most e^10, about 6 h) between
 * them, so 12 attempts cover about 16 hours of a relay being down before the mail is given up.
 */
const MAX_ATTEMPTS = 12;

/**
 * Queues one mail in the caller's transaction (graphile_worker.add_job on the same connection):
 * it is sent only if that transaction commits, and never inside the request. `runAt` delays it;
 * a `jobKey` replaces a still-pending mail queued with the same key (graphile-worker's default
 * `replace` mode), for mails that sum up a burst of changes.
 */
export async function enqueueMail(
  db: DbOrTrx,
  message: MailMessage,
  options: { runAt?: Date; jobKey?: string } = {},
): Promise<void> {
  const payload = {
    to: message.to,
    subject: message.subject,
    text: message.text,
    html: message.html,
    attachments: message.attachments,
  };
  await sql`select graphile_worker.add_job(
      ${MAIL_TASK}::text,
      ${JSON.stringify(payload)}::json,
      max_attempts => ${MAX_ATTEMPTS}::int,
      run_at => ${options.runAt ?? null}::timestamptz,
      job_key => ${options.jobKey ?? null}::text
    )`.execute(db);
}
