import { describeDetails, errors, type ErrorDetail } from "../http/errors.js";
import type { Recipient, ScheduleFields } from "./schedule.js";

const key = (email: string) => email.trim().toLowerCase();

/** The recipients with every address once (the first spelling kept, trimmed), in order. */
export function uniqueRecipients(recipients: readonly Recipient[]): Recipient[] {
  const seen = new Set<string>();
  const out: Recipient[] = [];
  for (const recipient of recipients) {
    const email = recipient.email.trim();
    if (seen.has(key(email))) continue;
    seen.add(key(email));
    out.push({ email, splitParts: recipient.splitParts ?? null });
  }
  return out;
}

/** The addresses with every address once (the first spelling kept, trimmed), in order. */
export function uniqueAddresses(addresses: readonly string[]): string[] {
  return uniqueRecipients(addresses.map((email) => ({ email, splitParts: null }))).map((r) => r.email);
}

/**
 * The schedule's fields with the lists deduplicated, or 400 `validation_error` naming each field
 * that breaks a rule: `fullCopyRecipients` only in `split_evenly` mode with at least 2 sharing
 * recipients and none of them among `recipients`; `combinedRecipients` needed when the combined
 * file is enabled. Checked on create and on the result of every update.
 */
export function checkScheduleFields(fields: ScheduleFields): ScheduleFields {
  const recipients = uniqueRecipients(fields.recipients);
  const fullCopyRecipients = uniqueAddresses(fields.fullCopyRecipients);
  const combinedRecipients = uniqueAddresses(fields.combinedRecipients);
  const details: ErrorDetail[] = [];
  if (fullCopyRecipients.length > 0) {
    if (fields.distributionMode !== "split_evenly" || recipients.length < 2) {
      details.push({
        path: ["body", "fullCopyRecipients"],
        message: "needs distributionMode split_evenly with at least 2 recipients sharing the leads",
      });
    }
    const sharing = new Set(recipients.map((r) => key(r.email)));
    if (fullCopyRecipients.some((email) => sharing.has(key(email)))) {
      details.push({
        path: ["body", "fullCopyRecipients"],
        message: "an address is already one of recipients",
      });
    }
  }
  if (fields.combinedFileEnabled && combinedRecipients.length === 0) {
    details.push({
      path: ["body", "combinedRecipients"],
      message: "needs at least one address when combinedFileEnabled is true",
    });
  }
  if (details.length > 0) throw errors.validation(describeDetails(details), details);
  return { ...fields, recipients, fullCopyRecipients, combinedRecipients };
}
