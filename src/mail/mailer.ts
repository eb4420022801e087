import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import nodemailer from "nodemailer";
import type { Readable } from "node:stream";
import type { Logger } from "pino";
import type { MailMessage } from "./message.js";

/** An attachment opened for sending: its bytes come from `content` while the mail is written. */
export interface OpenedAttachment {
  filename: string;
  contentType: string;
  content: Readable;
}

/** The service's one way to send e-mail (used by the `mail__send` task, never by a request). */
export interface Mailer {
  /**
   * Sends one message with its attachments opened (`message.attachments` names them; `files`
   * carries their bytes); throws when it could not be handed over (the job is then retried).
   */
  send(message: MailMessage, files?: OpenedAttachment[]): Promise<void>;
  /** Closes the SMTP connections, if any. */
  close(): void;
}

/** What a mailer is built from (configuration read by the entry point). */
export interface MailerOptions {
  /** `smtp://` or `smtps://` URL of the relay (it may hold a password: never logged); unset: .eml files. */
  smtpUrl: string | undefined;
  /** `DATA_DIR`: without SMTP, messages are written to `<dataDir>/mail/`. */
  dataDir: string;
  /** The `From` of every message (`MAIL_FROM`). */
  from: string;
  logger: Logger;
}

/**
 * Bounds of one SMTP attempt: nodemailer's defaults (2 min to connect, 10 min of silence) would hold
 * a worker slot far longer than a retry costs. Query parameters of `SMTP_URL` override them.
 */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

/** The domain of an address, the only part of a recipient that is logged. */
function domainOf(address: string): string {
  const at = address.lastIndexOf("@");
  return at === -1 ? "(none)" : address.slice(at + 1).replace(/>.*$/, "");
}

/** A file name part made of the Message-ID (or random bytes), safe on every file system. */
function fileStem(messageId: string | undefined): string {
  const id = (messageId ?? "").replace(/^<|>$/g, "").replace(/[^A-Za-z0-9._@-]/g, "_");
  return id === "" ? randomBytes(8).toString("hex") : id;
}

/** What nodemailer sends: the message's own fields, the sender and the opened attachments. */
function nodemailerMessage(message: MailMessage, from: string, files: OpenedAttachment[]) {
  const { to, subject, text, html } = message;
  return { to, subject, text, html, from, attachments: files.length > 0 ? files : undefined };
}

/**
 * Builds the mailer: with `smtpUrl`, nodemailer's SMTP transport delivers through that server;
 * without it, each message is rendered by nodemailer's stream transport and written as an `.eml`
 * file under `<dataDir>/mail/`, named `<ISO time without colons>-<Message-ID>.eml`, so a
 * development machine needs no mail server and a newcomer can open every mail in a mail client.
 */
export function createMailer(options: MailerOptions): Mailer {
  const { smtpUrl, dataDir, from, logger } = options;
  const log = logger.child({ component: "mailer" });
  const describe = (message: MailMessage) => ({ toDomain: domainOf(message.to), subject: message.subject });

  if (smtpUrl !== undefined) {
    const transport = nodemailer.createTransport({ url: smtpUrl, ...SMTP_TIMEOUTS });
    return {
      async send(message, files = []) {
        await transport.sendMail(nodemailerMessage(message, from, files));
        log.debug(describe(message), "mail sent over SMTP");
      },
      close: () => transport.close(),
    };
  }

  const folder = join(dataDir, "mail");
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true });
  return {
    async send(message, files = []) {
      const info = await transport.sendMail(nodemailerMessage(message, from, files));
      if (!Buffer.isBuffer(info.message)) throw new Error("stream transport returned no buffer");
      await mkdir(folder, { recursive: true });
      const time = new Date().toISOString().replace(/:/g, "");
      const path = join(folder, `${time}-${fileStem(info.messageId)}.eml`);
      await writeFile(path, info.message);
      log.debug({ ...describe(message), file: path }, "mail written to a file (SMTP_URL unset)");
    },
    close: () => transport.close(),
  };
}
