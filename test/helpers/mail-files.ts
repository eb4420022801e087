import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

// The mails the mail adapter writes as .eml files under `DATA_DIR/mail` without SMTP_URL, read
// back by the dashboard's tests and bench (no vitest here: scripts import it too).

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

const SIGN_IN_LINK = /(https?:\/\/\S+\/sign-in#token=[A-Za-z0-9_-]+)/;

/**
 * The sign-in link (`<base>/sign-in#token=...`) of the newest sign-in mail to the address among
 * those after its first `known` mails, once written.
 */
export async function waitForSignInLink(
  dataDir: string,
  address: string,
  known = 0,
  timeoutMs = 15_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // Other mails to the address (a key, an owner's notice) may come between: the newest link wins.
    const links = (await mailsTo(dataDir, address))
      .slice(known)
      .map((mail) => SIGN_IN_LINK.exec(mail)?.[1])
      .filter((link): link is string => link !== undefined);
    if (links.length > 0) return links[links.length - 1]!;
    if (Date.now() > deadline) throw new Error(`no sign-in mail to ${address}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The token of a sign-in link. */
export function tokenOf(link: string): string {
  return new URL(link).hash.replace(/^#token=/, "");
}
