import type { Task } from "graphile-worker";
import type { FileStorage } from "../storage/file-storage.js";
import type { Mailer, OpenedAttachment } from "./mailer.js";
import { toMailMessage, type MailAttachment } from "./message.js";

/** The attachments opened from storage; throws when one is missing (retried, then given up). */
async function openAttachments(
  storage: FileStorage | undefined,
  attachments: readonly MailAttachment[],
): Promise<OpenedAttachment[]> {
  if (attachments.length === 0) return [];
  if (!storage) throw new Error("this worker has no file storage for mail attachments");
  const opened: OpenedAttachment[] = [];
  for (const file of attachments) {
    const content = await storage.get(file.storageKey);
    if (!content) {
      for (const o of opened) o.content.destroy();
      throw new Error(`mail attachment ${file.filename} is not in storage`);
    }
    opened.push({ filename: file.filename, contentType: file.contentType, content });
  }
  return opened;
}

/**
 * `mail__send`: sends the mail of the payload. A payload that is not a mail (written by other
 * code, or edited by hand) is logged and dropped: retrying could never fix it. A failed send
 * throws, so graphile-worker retries it with its backoff (see MAX_ATTEMPTS in queue.ts).
 */
export function mailSendTask(mailer: Mailer, storage?: FileStorage): Task {
  return async (payload, helpers) => {
    const message = toMailMessage(payload);
    if (!message) {
      // The payload itself is not logged: it may hold a mail body.
      helpers.logger.error(`${helpers.job.task_identifier}: payload is not a mail message; dropped`, {
        jobId: helpers.job.id,
      });
      return;
    }
    const files = await openAttachments(storage, message.attachments ?? []);
    try {
      await mailer.send(message, files);
    } finally {
      for (const file of files) file.content.destroy();
    }
  };
}
