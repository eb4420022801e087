/**
 * E-mail addresses of purchases: a practical validity check (one `@`, a dotted domain of
 * letters, digits and hyphens, no spaces, at most 254 characters as SMTP allows) and the key a
 * trial is remembered by, so one person gets one trial whatever the letter case or `+tag`.
 */
const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;

export function isValidEmail(value: string): boolean {
  if (value.length > 254) return false;
  const local = value.slice(0, value.lastIndexOf("@"));
  return (
    EMAIL.test(value) &&
    local.length <= 64 &&
    !local.startsWith(".") &&
    !local.endsWith(".") &&
    !local.includes("..")
  );
}

/** The domain of an address, lower-cased. */
export const domainOf = (email: string): string => email.slice(email.lastIndexOf("@") + 1).toLowerCase();

/** The person behind an address: lower-cased, without a `+tag` in the local part. */
export function trialKey(email: string): string {
  const at = email.lastIndexOf("@");
  const local = email.slice(0, at).toLowerCase().replace(/\+.*$/, "");
  return `${local}@${domainOf(email)}`;
}
