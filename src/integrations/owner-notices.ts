import type { Trx } from "../db/database.js";
import type { Caller } from "../http/contract.js";
import { enqueueMail } from "../mail/queue.js";
import type { Additions } from "./changes.js";
import {
  countRecentNotices,
  insertNotice,
  lockAccountNotices,
  markNoticesMailed,
  ownerEmail,
  pendingNotices,
  queueSummaryJob,
} from "./notice-repository.js";
import { providerById } from "./providers.js";

/** The worker task that mails one summary of an account's unmailed notices. */
export const OWNER_SUMMARY_TASK = "integrations__owner_summary";

/** Change notices of an account mailed one by one per hour; beyond, they wait for a summary. */
export const NOTICES_MAILED_PER_HOUR = 10;

/** How long a summary waits for more notices of the same burst. */
export const SUMMARY_DELAY_SECONDS = 10 * 60;

/** Cap on the notices listed in one summary mail (all of them are marked mailed). */
const SUMMARY_LIST_LIMIT = 200;

const FOOTER =
  "\n\nYou receive this e-mail as the owner of the account. If you do not recognise the API key, " +
  "revoke it in the dashboard's API tab.\n";

/**
 * Tells the account owner of an integration change made with an API key (`change`), or of a
 * problem the service found (`alert`, for example an integration moved to needs_attention).
 * Written in the transaction of its cause, so nothing is mailed for a change that rolled back;
 * mailing is a worker job. An alert is mailed at once and does not count. A change is stored as a
 * notice and mailed at once while the account has at most 10 notices in the last hour; beyond,
 * it stays unmailed and one summary job per account mails every unmailed notice together.
 */
export async function recordOwnerNotice(
  trx: Trx,
  notice: { accountId: number; summary: string; kind: "change" | "alert" },
): Promise<void> {
  const to = await ownerEmail(trx, notice.accountId);
  if (to === undefined) return;
  if (notice.kind === "alert") {
    await enqueueMail(trx, {
      to,
      subject: "An integration needs your attention",
      text: notice.summary + FOOTER,
    });
    return;
  }
  await lockAccountNotices(trx, notice.accountId);
  const id = await insertNotice(trx, notice.accountId, notice.summary);
  if ((await countRecentNotices(trx, notice.accountId)) > NOTICES_MAILED_PER_HOUR) {
    await queueSummaryJob(trx, OWNER_SUMMARY_TASK, notice.accountId, SUMMARY_DELAY_SECONDS);
    return;
  }
  await enqueueMail(trx, {
    to,
    subject: "An API key changed your integrations",
    text: `A change to your integrations was made with an API key:\n\n${notice.summary}${FOOTER}`,
  });
  await markNoticesMailed(trx, [id]);
}

/**
 * Mails one summary of the account's unmailed notices and marks them mailed (the summary task);
 * the number of notices. Idempotent: a second run finds nothing to mail.
 */
export async function mailOwnerSummary(trx: Trx, accountId: number): Promise<number> {
  await lockAccountNotices(trx, accountId);
  const notices = await pendingNotices(trx, accountId);
  const to = await ownerEmail(trx, accountId);
  if (notices.length === 0 || to === undefined) return 0;
  const listed = notices.slice(0, SUMMARY_LIST_LIMIT);
  const lines = listed.map((n) => `${n.createdAt.toISOString()}\n${n.summary}`);
  if (notices.length > listed.length) lines.push(`... and ${notices.length - listed.length} more changes.`);
  await enqueueMail(trx, {
    to,
    subject: `${notices.length} changes to your integrations by API keys`,
    text:
      `More than ${NOTICES_MAILED_PER_HOUR} changes to your integrations were made with API keys within an ` +
      `hour, so they are combined here:\n\n${lines.join("\n\n")}${FOOTER}`,
  });
  await markNoticesMailed(
    trx,
    notices.map((n) => n.id),
  );
  return notices.length;
}

/**
 * The text of a change notice: the integration, the key's prefix and name, what the change added
 * (destination hosts only: never a full URL or a secret) and how to undo it.
 */
export function describeKeyChange(input: {
  integration: { id: number; displayName: string; provider: string };
  caller: Pick<Caller, "keyPrefix" | "keyName">;
  action: "created" | "changed";
  additions: Additions;
}): string {
  const { integration, caller, additions } = input;
  const providerName = providerById(integration.provider)?.name ?? integration.provider;
  const lines = [
    `Integration #${integration.id} "${oneLine(integration.displayName)}" (${providerName}) was ${input.action} ` +
      (caller.keyPrefix === null || caller.keyName === null
        ? "in the dashboard."
        : `with the API key ${caller.keyPrefix}... ("${oneLine(caller.keyName)}").`),
  ];
  const hosts = unique(additions.destinations.map(hostOf));
  if (hosts.length > 0) lines.push(`- New destination: ${hosts.join(", ")}`);
  if (additions.events.length > 0) {
    const events = unique(
      additions.events.map(
        (e) => `${e.eventType} to ${e.destination === null ? providerName : hostOf(e.destination)}`,
      ),
    );
    lines.push(`- Events now delivered: ${events.join(", ")}`);
  }
  if (additions.reEnabledFrom !== undefined) {
    const was = additions.reEnabledFrom === "needs_attention" ? "needed attention" : "was disabled";
    lines.push(`- Re-enabled: it ${was} and is connected again.`);
  }
  lines.push(
    `To undo it: PATCH /api/v1/integrations/${integration.id} (for example {"status": "disabled"}) ` +
      `or DELETE /api/v1/integrations/${integration.id}.`,
  );
  return lines.join("\n");
}

/** The host (and port) of a URL, never its path, query or credentials. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host || "(no host)";
  } catch {
    return "(invalid address)";
  }
}

/** A name on one line: line breaks and other control characters of user text become spaces. */
function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f]+/g, " ");
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
