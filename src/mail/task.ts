import type { Task } from "graphile-worker";
import type { Mailer } from "./mailer.js";
import { toMailMessage } from "./message.js";

/**
 * `mail__send`: sends the mail of the payload. A payload that is not a mail (written by other
 * code, or edited by hand) is logged and dropped: retrying could never fix it. A failed send
 * throws, so graphile-worker retries it with its backoff (see MAX_ATTEMPTS in queue.ts).
 */
export function mailSendTask(mailer: Mailer): Task {
  return async (payload, helpers) => {
    const message = toMailMessage(payload);
    if (!message) {
      // The payload itself is not logged: it may hold a mail body.
      helpers.logger.error(`${helpers.job.task_identifier}: payload is not a mail message; dropped`, {
        jobId: helpers.job.id,
      });
      return;
    }
    await mailer.send(message);
  };
}
