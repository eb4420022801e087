import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

/** One message as the local SMTP server received it. */
export interface ReceivedMail {
  /** The envelope sender (MAIL FROM). */
  from: string;
  /** The envelope recipients (RCPT TO). */
  to: string[];
  /** The message as sent, headers and body. */
  raw: string;
  /** The decoded `Subject` header. */
  subject: string;
  /** The decoded plain-text body (the text/plain part of a multipart message). */
  text: string;
}

/** A local SMTP server started by a test (no TLS, any or no login accepted). */
export interface TestSmtpServer {
  /** `smtp://127.0.0.1:<port>`: give it to the mailer as `smtpUrl`. */
  url: string;
  /** Every message received so far, in order. */
  messages: ReceivedMail[];
  /** The first message (received or still to come) that matches; rejects after `timeoutMs`. */
  waitFor(predicate: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

/** Headers (unfolded, names lower-cased; the first of a repeated name) and body of a MIME entity. */
function splitEntity(raw: string): { headers: Map<string, string>; body: string } {
  const end = raw.search(/\r?\n\r?\n/);
  const head = end === -1 ? raw : raw.slice(0, end);
  const body = end === -1 ? "" : raw.slice(end).replace(/^\r?\n\r?\n/, "");
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, " ").split(/\r?\n/)) {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).trim().toLowerCase();
    if (colon > 0 && !headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  return { headers, body };
}

/** Quoted-printable text (RFC 2045) decoded: soft line breaks removed, `=XX` bytes read as UTF-8. */
function decodeQuotedPrintable(value: string): string {
  const soft = value.replace(/=\r?\n/g, "");
  const bytes: number[] = [];
  for (let i = 0; i < soft.length; i += 1) {
    const hex = soft[i] === "=" ? soft.slice(i + 1, i + 3) : "";
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(soft[i]!, "utf8"));
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

/** A header value with RFC 2047 encoded words (`=?UTF-8?B?...?=`, `=?UTF-8?Q?...?=`) decoded. */
function decodeHeader(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, "?==?")
    .replace(/=\?[^?]+\?([BbQq])\?([^?]*)\?=/g, (_m, kind: string, data: string) =>
      kind.toUpperCase() === "B"
        ? Buffer.from(data, "base64").toString("utf8")
        : decodeQuotedPrintable(data.replace(/_/g, " ")),
    );
}

/** The plain text of an entity: its body decoded, or the text/plain part of a multipart one. */
function plainText(raw: string): string {
  const { headers, body } = splitEntity(raw);
  const type = headers.get("content-type") ?? "text/plain";
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (type.toLowerCase().startsWith("multipart/") && boundary) {
    const parts = body.split(`--${boundary}`).slice(1, -1);
    const text = parts.find((part) => /^content-type:\s*text\/plain/im.test(splitPartHead(part)));
    return text === undefined ? "" : plainText(text.replace(/^\r?\n/, ""));
  }
  const encoding = (headers.get("content-transfer-encoding") ?? "7bit").toLowerCase();
  if (encoding === "base64") return Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8");
  if (encoding === "quoted-printable") return decodeQuotedPrintable(body);
  return body;
}

/** The header block of a multipart part. */
function splitPartHead(part: string): string {
  const end = part.search(/\r?\n\r?\n/);
  return end === -1 ? part : part.slice(0, end);
}

/** The message as a test reads it: envelope, decoded subject and plain text (line ends as LF). */
function toReceived(raw: string, from: string, to: string[]): ReceivedMail {
  const subject = decodeHeader(splitEntity(raw).headers.get("subject") ?? "");
  const text = plainText(raw).replace(/\r\n/g, "\n").replace(/\n$/, "");
  return { from, to, raw, subject, text };
}

/**
 * Starts a real SMTP server (the `smtp-server` package) on 127.0.0.1 and a free port, keeping
 * every message it accepts: mail tests go over a real SMTP round trip, never to the network.
 */
export async function startSmtpServer(): Promise<TestSmtpServer> {
  const messages: ReceivedMail[] = [];
  const waiters = new Set<(mail: ReceivedMail) => void>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    closeTimeout: 1_000,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("error", callback);
      stream.on("end", () => {
        const { mailFrom, rcptTo } = session.envelope;
        const mail = toReceived(
          Buffer.concat(chunks).toString("utf8"),
          mailFrom === false ? "" : mailFrom.address,
          rcptTo.map((rcpt) => rcpt.address),
        );
        messages.push(mail);
        for (const waiter of waiters) waiter(mail);
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;

  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    waitFor(predicate, timeoutMs = 5_000) {
      const found = messages.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise<ReceivedMail>((resolve, reject) => {
        const waiter = (mail: ReceivedMail) => {
          if (!predicate(mail)) return;
          clearTimeout(timer);
          waiters.delete(waiter);
          resolve(mail);
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no matching mail within ${timeoutMs} ms (${messages.length} received)`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
