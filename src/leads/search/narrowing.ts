import type { LeadsTable } from "../../db/schema/leads.js";
import type { NumberBounds } from "./input.js";

/**
 * The filters that only narrow a search and read one column each: empty-value filters, numeric
 * ranges and exact value lists. Each is declared once here, for parsing (filters.ts), the
 * canonical JSON and the SQL (condition.ts).
 */

/**
 * `<key>EmptyFilter` parameters outside the term filters of fields.ts, and their column. Empty is
 * null or blank text, null for a number, an empty list.
 */
export const EMPTY_FILTERS = [
  { key: "state", column: "state", kind: "text" },
  { key: "city", column: "city", kind: "text" },
  { key: "zip", column: "zip", kind: "text" },
  { key: "street", column: "street", kind: "text" },
  { key: "description", column: "description", kind: "text" },
  { key: "openPositions", column: "open_positions", kind: "number" },
  { key: "emailPrimaryMx", column: "email_primary_mx", kind: "text" },
  { key: "emailDomainMx", column: "email_domain_mx", kind: "text" },
  { key: "emailSecurity", column: "email_security", kind: "list" },
  { key: "addressSource", column: "address_source", kind: "text" },
] as const satisfies readonly { key: string; column: keyof LeadsTable; kind: "text" | "number" | "list" }[];
export type EmptyFilterKey = (typeof EMPTY_FILTERS)[number]["key"];

/** `min<Key>` / `max<Key>` ranges (inclusive; leads without a value are left out when one is set). */
export const RANGES = [
  { key: "Stars", column: "stars", bounds: { min: 0, max: 5, integer: false } },
  { key: "ReviewCount", column: "review_count", bounds: { min: 0, integer: true } },
  { key: "NumLocations", column: "number_of_locations", bounds: { min: 0, integer: true } },
  { key: "OpenPositions", column: "open_positions", bounds: { min: 0, integer: true } },
  { key: "RatingValue", column: "rating_value", bounds: { min: 0, integer: false } },
] as const satisfies readonly { key: string; column: keyof LeadsTable; bounds: NumberBounds }[];
export type RangeKey = (typeof RANGES)[number]["key"];

/** A range's bounds; null is no bound. */
export interface NumberRange {
  min: number | null;
  max: number | null;
}

/** `<key>Values` lists: exact values, case-insensitive; `list` columns match any of their items. */
export const VALUE_LISTS = [
  { key: "emailPrimaryMx", column: "email_primary_mx", list: false },
  { key: "emailDomainMx", column: "email_domain_mx", list: false },
  { key: "emailSecurity", column: "email_security", list: true },
  { key: "addressSource", column: "address_source", list: false },
] as const satisfies readonly { key: string; column: keyof LeadsTable; list: boolean }[];
export type ValueListKey = (typeof VALUE_LISTS)[number]["key"];

/** `redirectFilter`: `yes` keeps redirecting websites, `no` the others and those without a value. */
export const REDIRECT_VALUES = ["yes", "no"] as const;
export type RedirectFilter = (typeof REDIRECT_VALUES)[number];
