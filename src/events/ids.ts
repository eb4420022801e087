import { randomBytes } from "node:crypto";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/**
 * A new event id, `evt_<unix milliseconds>_<12 letters and digits>`: chosen once when the event
 * becomes a delivery and kept on every attempt, so receivers can skip duplicates.
 */
export function newEventId(now = Date.now()): string {
  const bytes = randomBytes(12);
  let suffix = "";
  for (const byte of bytes) suffix += ALPHABET[byte % ALPHABET.length];
  return `evt_${now}_${suffix}`;
}
