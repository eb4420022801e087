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
}

/**
 * The message when `value` is one (a queued job's payload was written by older or newer code, so
 * it is checked at run time); undefined otherwise. Only the known fields are kept.
 */
export function toMailMessage(value: unknown): MailMessage | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { to, subject, text, html } = value as Record<string, unknown>;
  if (typeof to !== "string" || to === "" || typeof subject !== "string" || typeof text !== "string") {
    return undefined;
  }
  if (html !== undefined && typeof html !== "string") return undefined;
  return html === undefined ? { to, subject, text } : { to, subject, text, html };
}
