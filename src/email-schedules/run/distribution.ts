import type { EmailSchedule } from "../schedule.js";

/** The assignee of leads every recipient gets (the combined file's assignee column). */
export const ALL_RECIPIENTS = "all recipients";
/** File name prefix of the files with every lead of a send. */
export const FULL_PREFIX = "leads-main";

/** Leads written as one set of files (one export, split by the format when it splits), and who gets them. */
export interface FileSet {
  /** File name prefix (`leads-main`, or `leads-main-<recipient>` for a recipient's share). */
  prefix: string;
  /** The combined file's assignee of these leads. */
  assignee: string;
  leadIds: number[];
  /** Addresses that get these files. */
  to: string[];
  /** A share of `split_evenly` (false: every lead of the send). */
  share: boolean;
}

/**
 * `total` split by weight, the largest remainders going to the first recipients: weights 2, 1, 1
 * of 9 give 5, 2, 2 (4.5, 2.25, 2.25, the spare one to the first).
 */
export function shareSizes(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  const sizes = weights.map((w) => Math.floor((total * w) / sum));
  let left = total - sizes.reduce((a, b) => a + b, 0);
  const order = weights
    .map((w, i) => ({ i, rest: (total * w) / sum - sizes[i]! }))
    .sort((a, b) => b.rest - a.rest || a.i - b.i);
  for (const { i } of order) {
    if (left === 0) break;
    sizes[i]! += 1;
    left -= 1;
  }
  return sizes;
}

/** A file-name-safe slug of an address, unique among `taken`. */
function slugOf(email: string, taken: Set<string>): string {
  const base =
    email
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "") || "recipient";
  let slug = base;
  for (let n = 2; taken.has(slug); n += 1) slug = `${base}-${n}`;
  taken.add(slug);
  return slug;
}

/**
 * The file sets of a send of these leads (in send order): `full_copy` (or a single recipient)
 * is one set to every recipient; `split_evenly` among 2 or more recipients gives each its share
 * (consecutive leads, by weight; an empty share sends nothing), plus every lead to the
 * `fullCopyRecipients`.
 */
export function planFileSets(
  schedule: Pick<EmailSchedule, "distributionMode" | "recipients" | "fullCopyRecipients">,
  leadIds: readonly number[],
): FileSet[] {
  const everyone = schedule.recipients.map((r) => r.email);
  if (schedule.distributionMode === "full_copy" || schedule.recipients.length < 2) {
    const assignee = everyone.length === 1 ? everyone[0]! : ALL_RECIPIENTS;
    return [{ prefix: FULL_PREFIX, assignee, leadIds: [...leadIds], to: everyone, share: false }];
  }
  const sizes = shareSizes(
    leadIds.length,
    schedule.recipients.map((r) => r.splitParts ?? 1),
  );
  const taken = new Set<string>();
  const sets: FileSet[] = [];
  let at = 0;
  schedule.recipients.forEach((recipient, i) => {
    const size = sizes[i]!;
    const ids = leadIds.slice(at, at + size);
    at += size;
    const prefix = `${FULL_PREFIX}-${slugOf(recipient.email, taken)}`;
    if (ids.length > 0) {
      sets.push({ prefix, assignee: recipient.email, leadIds: ids, to: [recipient.email], share: true });
    }
  });
  if (schedule.fullCopyRecipients.length > 0) {
    sets.push({
      prefix: FULL_PREFIX,
      assignee: ALL_RECIPIENTS,
      leadIds: [...leadIds],
      to: [...schedule.fullCopyRecipients],
      share: false,
    });
  }
  return sets;
}
