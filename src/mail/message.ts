/**
 * One e-mail as the service's areas build it: a single recipient, a subject and a plain-text body
 * (an HTML body is optional; every mail stays readable as text). The sender is the deployment's
 * `MAIL_FROM`, added by the mailer, so callers cannot forge it.
 */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** Files attached from the file storage (read when the mail is sent, never held in the queue). */
  attachments?: MailAttachment[];
}

/** A stored file attached to a mail. */
export interface MailAttachment {
  filename: string;
  contentType: string;
  /** Key of the file in the file storage (src/storage/). */
  storageKey: string;
}

/** The attachments when `value` is a list of them; undefined otherwise. */
function toAttachments(value: unknown): MailAttachment[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: MailAttachment[] = [];
  for (const item of value as unknown[]) {
    if (typeof item !== "object" || item === null) return undefined;
    const { filename, contentType, storageKey } = item as Record<string, unknown>;
    if (typeof filename !== "string" || typeof contentType !== "string" || typeof storageKey !== "string") {
      return undefined;
    }
    out.push({ filename, contentType, storageKey });
  }
  return out;
}

/**
 * The message when `value` is one (a queued job's payload was written by older or newer code, so
 * it is checked at run time); undefined otherwise. Only the known fields are kept.
 */
export function toMailMessage(value: unknown): MailMessage | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { to, subject, text, html, attachments } = value as Record<string, unknown>;
  if (typeof to !== "string" || to === "" || typeof subject !== "string" || typeof text !== "string") {
    return undefined;
  }
  if (html !== undefined && html !== null && typeof html !== "string") return undefined;
  const message: MailMessage = typeof html === "string" ? { to, subject, text, html } : { to, subject, text };
  if (attachments === undefined || attachments === null) return message;
  const files = toAttachments(attachments);
  return files === undefined ? undefined : { ...message, attachments: files };
}
