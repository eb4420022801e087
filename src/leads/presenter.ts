import type { components } from "../../generated/api.js";
import { compileShape, member } from "./compiled-shape.js";
import { LEAD_FIELDS, storedFieldOf, type LeadField } from "./fields.js";
import type { LeadRecord } from "./lead.js";

/** The API's Lead (search, preview, export). */
export type ApiLead = components["schemas"]["Lead"];

/** Names of the fields holding one contact detail of a kind, as a value (`text`) or a list. */
const contactFields = (contact: "phone" | "email", type: "text" | "list"): readonly string[] =>
  LEAD_FIELDS.filter((field) => field.contact === contact && field.type === type).map((f) => f.name);

/**
 * The contact fields a preview masks on leads the account has not received (the catalogue's
 * `contact` fields); list fields item by item, as the real service does.
 */
export const MASKED_PHONE_FIELDS = contactFields("phone", "text");
export const MASKED_EMAIL_FIELDS = contactFields("email", "text");
export const MASKED_PHONE_LIST_FIELDS = contactFields("phone", "list");
export const MASKED_EMAIL_LIST_FIELDS = contactFields("email", "list");

/**
 * The JavaScript of a field's value in the API's Lead, read from the LeadRecord `lead` (an
 * expression, `v` by default) of a compiled shape; date-times call the helper `isoOrNull`
 * (LEAD_SHAPE_HELPERS).
 */
export function apiValueCode(field: LeadField, lead = "v"): string {
  const derived = field.derived;
  if (derived?.kind === "constant") return JSON.stringify(derived.value);
  if (derived?.kind === "firstOf") {
    return [...derived.columns.map((c) => member(lead, storedFieldOf(c).name)), "null"].join(" ?? ");
  }
  if (derived?.kind === "countSet") {
    return derived.columns.map((c) => `(${member(lead, storedFieldOf(c).name)} ? 1 : 0)`).join(" + ");
  }
  const value = member(lead, field.copyOf ?? field.name);
  return field.type === "timestamp" ? `isoOrNull(${value})` : value;
}

/** The helpers apiValueCode's expressions call. */
export const LEAD_SHAPE_HELPERS = {
  isoOrNull: (value: Date | null): string | null => (value === null ? null : value.toISOString()),
};

/**
 * The API's Lead: every field of the catalogue (src/leads/fields.ts) in its order, compiled once
 * (src/leads/compiled-shape.ts). A value the database lacks is null, lists are empty arrays
 * (`aiCategoryEstimation` stays null while not classified). `website` is the registered URL or,
 * without one, the crawled URL; `address` is the street line; `phoneTotal` counts phones;
 * date-times are ISO 8601 strings.
 */
export const toLead: (lead: LeadRecord) => ApiLead = compileShape(
  "toLead",
  LEAD_FIELDS.map((field) => [field.name, apiValueCode(field)] as const),
  LEAD_SHAPE_HELPERS,
);

/**
 * Masks a phone number, keeping the area code and the last two digits: `(512) 555-0142` ->
 * `(512) ***-**42`. Numbers with a leading US country code keep the area code after it; a number
 * with fewer than 7 digits becomes `***`.
 */
export function maskPhone(phone: string | null): string | null {
  if (phone === null) return null;
  let digits = phone.replace(/\D/g, "");
  if (digits.length === 11 && digits.startsWith("1")) digits = digits.slice(1);
  if (digits.length < 7) return "***";
  return `(${digits.slice(0, 3)}) ***-**${digits.slice(-2)}`;
}

/**
 * Masks an e-mail address, keeping the first three characters of the local part and the domain:
 * `hello@domain.com` -> `hel*@domain.com` (a shorter local part keeps its first character).
 */
export function maskEmail(email: string | null): string | null {
  if (email === null) return null;
  const at = email.lastIndexOf("@");
  if (at <= 0) return "***";
  const local = email.slice(0, at);
  const keep = local.length > 3 ? 3 : Math.max(1, local.length - 1);
  return `${local.slice(0, keep)}*${email.slice(at)}`;
}

/** The Lead with its contact fields masked (preview of a lead the account has not received). */
export function toMaskedLead(lead: LeadRecord): ApiLead {
  const out = toLead(lead);
  // The catalogue names the fields; each holds a string or null (a list: strings).
  const values = out as unknown as Record<string, string | null | string[]>;
  for (const field of MASKED_PHONE_FIELDS) values[field] = maskPhone(values[field] as string | null);
  for (const field of MASKED_EMAIL_FIELDS) values[field] = maskEmail(values[field] as string | null);
  for (const field of MASKED_PHONE_LIST_FIELDS)
    values[field] = (values[field] as string[]).map((phone) => maskPhone(phone) ?? "***");
  for (const field of MASKED_EMAIL_LIST_FIELDS)
    values[field] = (values[field] as string[]).map((email) => maskEmail(email) ?? "***");
  return out;
}
