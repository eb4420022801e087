import { CONTENT_TYPES } from "../../export-files/format.js";
import type { ExportHistoryEntry } from "../../export-history/entry.js";
import { signFileToken } from "../../export-history/signed-links.js";
import type { MailAttachment, MailMessage } from "../../mail/message.js";
import type { FileStorage } from "../../storage/file-storage.js";
import { presignedLink } from "../../storage/presigned-link.js";

/**
 * Most bytes of files attached to one e-mail: 15 MB, about 20 MB once base64-encoded, which
 * common mail servers accept (docs/email-schedules.md). Files beyond it go as signed links.
 */
export const ATTACHMENT_LIMIT_BYTES = 15 * 1024 * 1024;
/** How long a download link in a schedule's e-mail works (never past the file's own expiry). */
export const MAIL_LINK_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;

/** What signs the download links of e-mails. */
export interface MailLinkSigner {
  signingSecret: string;
  publicBaseUrl: string;
}

/**
 * A download link to an export history file, valid 7 days (or until the file expires): the same
 * kind of link as `GET /export-history/{id}/download-url` (a presigned URL of the bucket when
 * files are in object storage, else a `/files/{token}` link), longer lived because an e-mail is
 * read later.
 */
export async function mailDownloadLink(
  signer: MailLinkSigner,
  entry: ExportHistoryEntry,
  now: Date,
  storage?: FileStorage,
): Promise<{ url: string; expiresAt: Date }> {
  const expiresAt = new Date(Math.min(now.getTime() + MAIL_LINK_LIFETIME_MS, entry.expiresAt.getTime()));
  const file = {
    storageKey: entry.storageKey,
    fileName: entry.fileName,
    contentType: CONTENT_TYPES[entry.fileType],
  };
  const presigned = storage && (await presignedLink(storage, file, expiresAt, now));
  if (presigned) return presigned;
  const token = signFileToken(signer.signingSecret, {
    entryId: entry.id,
    accountId: entry.accountId,
    expiresAt,
  });
  return { url: `${signer.publicBaseUrl}/api/v1/files/${token}`, expiresAt };
}

/** One e-mail of a send: its address and files (export history entries, in order). */
export interface SendMail {
  to: string;
  files: ExportHistoryEntry[];
}

/**
 * The message of one address: the files attached in order while their sizes add up to at most
 * `attachmentLimitBytes`; every other file as a signed link in the text.
 */
export async function composeSendMail(
  mail: SendMail,
  context: {
    scheduleName: string;
    leadCount: number;
    attachmentLimitBytes: number;
    signer: MailLinkSigner;
    now: Date;
    /** The file store: its presigned links when it makes them (object storage). */
    storage?: FileStorage;
  },
): Promise<MailMessage> {
  const attachments: MailAttachment[] = [];
  const links: string[] = [];
  let attached = 0;
  for (const file of mail.files) {
    if (attached + file.fileSize <= context.attachmentLimitBytes) {
      attached += file.fileSize;
      attachments.push({
        filename: file.fileName,
        contentType: CONTENT_TYPES[file.fileType],
        storageKey: file.storageKey,
      });
      continue;
    }
    const link = await mailDownloadLink(context.signer, file, context.now, context.storage);
    links.push(
      `- ${file.fileName} (${file.leadCount} leads): ${link.url} (valid until ${link.expiresAt.toISOString()})`,
    );
  }
  const leads = mail.files.reduce((n, f) => n + f.leadCount, 0);
  const lines = [
    `Your e-mail schedule "${context.scheduleName}" sent ${context.leadCount} new lead(s).`,
    "",
    ...(attachments.length > 0 ? [`Attached: ${attachments.map((a) => a.filename).join(", ")}.`] : []),
    ...(links.length > 0 ? ["Files too large to attach, to download:", ...links] : []),
    "",
    `Rows in the files of this e-mail: ${leads}.`,
  ];
  return {
    to: mail.to,
    subject: `${context.scheduleName}: ${context.leadCount} new lead(s)`,
    text: `${lines.join("\n")}\n`,
    attachments,
  };
}

/** The owner's notice that a schedule paused because the balance could not pay for its leads. */
export function pausedForCreditsMail(owner: string, scheduleName: string, leftOut: number): MailMessage {
  return {
    to: owner,
    subject: `E-mail schedule "${scheduleName}" paused: not enough credits`,
    text:
      `Your e-mail schedule "${scheduleName}" found new leads that your balance could not pay for ` +
      `(${leftOut} waiting), so it was paused. Buy credits or set an overage budget, then resume ` +
      "the schedule (PATCH /email-schedules/{id} with isActive true); the waiting leads are sent first.\n",
  };
}
