import { sql, type RawBuilder, type SqlBool } from "kysely";
import { FILTERED_LEAD_FIELDS, type LeadField } from "../fields.js";
import type { EmptyFilter } from "./input.js";
import { and, escapeLike, or, type Condition } from "./patterns.js";
import { isPhoneField, type FieldTermFilter, type TermItem } from "./terms.js";

/**
 * A field's values as text, for its term filters: one text value (`scalar`) or a text array
 * (list items each; `socialProfiles` its URLs; a boolean `true`/`yes` or `false`/`no`).
 */
type FieldText =
  { kind: "scalar"; value: RawBuilder<string> } | { kind: "array"; values: RawBuilder<string[]> };

function fieldText(field: LeadField): FieldText {
  // A field derived from several columns (`phoneTotal`: the phones) has their values.
  if (field.column === null) {
    const derived = field.derived;
    if (!derived || derived.kind === "constant") {
      throw new Error(`lead field ${field.name} has a filter key but no values`);
    }
    const refs = derived.columns.map((c) => sql.ref(`leads.${c}`));
    return { kind: "array", values: sql`array[${sql.join(refs)}]::text[]` };
  }
  const ref = sql.ref(`leads.${field.column}`);
  switch (field.type) {
    case "text":
      return { kind: "scalar", value: sql`${ref}` };
    case "integer":
    case "number":
      return { kind: "scalar", value: sql`${ref}::text` };
    case "date":
      return { kind: "scalar", value: sql`to_char(${ref}, 'YYYY-MM-DD')` };
    case "timestamp":
      return { kind: "scalar", value: sql`to_char(${ref} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')` };
    case "boolean":
      return {
        kind: "array",
        values: sql`case when ${ref} then array['true', 'yes'] when not ${ref} then array['false', 'no'] end`,
      };
    case "list":
      return { kind: "array", values: sql`${ref}` };
    case "object":
      return { kind: "array", values: sql`array(select e.value from jsonb_each_text(${ref}) e)` };
  }
}

/** The SQL text of every filtered field, built once (a field without values fails at start-up). */
const FIELD_TEXT: ReadonlyMap<string, { field: LeadField; text: FieldText }> = new Map(
  FILTERED_LEAD_FIELDS.map((field) => [field.filterKey, { field, text: fieldText(field) }]),
);

/** The LIKE pattern of an item: `%v%`, `v%` or `%v`, with `v` literal. */
function itemPattern(value: string, item: TermItem): string {
  const v = escapeLike(value);
  return item.m === "starts" ? `${v}%` : item.m === "ends" ? `%${v}` : `%${v}%`;
}

/**
 * The digits a phone term compares (null: the term has none and compares as text). A leading
 * `+1` or an 11-digit number starting with 1 drops the 1, as the stored side does.
 */
export function phoneTermDigits(value: string): string | null {
  let digits = value.replace(/\D/g, "");
  if (digits.length === 0) return null;
  if (/^\s*\+\s*1/.test(value) || (digits.length === 11 && digits.startsWith("1"))) digits = digits.slice(1);
  return digits;
}

/** A stored phone's digits; an 11-digit number starting with 1 drops the 1. */
const phoneDigits = (x: RawBuilder<string>) =>
  sql<string>`regexp_replace(regexp_replace(coalesce(${x}, ''), '[^0-9]', '', 'g'), '^1([0-9]{10})$', '\\1')`;

/** Whether one text value `x` matches an item (phones: by digits when the term has digits). */
function itemMatches(x: RawBuilder<string>, item: TermItem, phone: boolean): Condition {
  const digits = phone ? phoneTermDigits(item.v) : null;
  if (digits !== null) return sql<SqlBool>`${phoneDigits(x)} like ${itemPattern(digits, item)}`;
  return sql<SqlBool>`lower(coalesce(${x}, '')) like lower(${itemPattern(item.v, item)})`;
}

/** Whether any of the field's values matches any of the items. */
function anyItemMatches(text: FieldText, items: TermItem[], phone: boolean): Condition {
  if (text.kind === "scalar") return or(items.map((item) => itemMatches(text.value, item, phone)));
  const x = sql<string>`v.x`;
  return sql<SqlBool>`exists (select 1 from unnest(${text.values}) as v(x) where ${or(
    items.map((item) => itemMatches(x, item, phone)),
  )})`;
}

/** Whether the field has no value: null or blank, an empty list, no item that is not blank. */
function isEmpty(text: FieldText): Condition {
  if (text.kind === "scalar") return sql<SqlBool>`coalesce(btrim(${text.value}), '') = ''`;
  return sql<SqlBool>`not exists (select 1 from unnest(${text.values}) as v(x) where coalesce(btrim(v.x), '') <> '')`;
}

/** `only_empty` / `exclude_empty` over an emptiness condition. */
export function emptyCondition(empty: EmptyFilter, isEmptyCondition: Condition): Condition {
  return empty === "only_empty" ? isEmptyCondition : sql<SqlBool>`not ${isEmptyCondition}`;
}

/** The conditions of the contact and company-detail term filters, ANDed. */
export function fieldTermConditions(filters: Record<string, FieldTermFilter>): Condition[] {
  const all: Condition[] = [];
  for (const [key, filter] of Object.entries(filters)) {
    const entry = FIELD_TEXT.get(key);
    if (!entry) throw new Error(`unknown term filter key ${key}`);
    const phone = isPhoneField(entry.field);
    if (filter.include.length > 0) all.push(anyItemMatches(entry.text, filter.include, phone));
    if (filter.exclude.length > 0) {
      all.push(sql<SqlBool>`not ${anyItemMatches(entry.text, filter.exclude, phone)}`);
    }
    if (filter.empty !== null) all.push(emptyCondition(filter.empty, isEmpty(entry.text)));
  }
  return all.length === 0 ? [] : [and(all)];
}
