import { sql, type RawBuilder } from "kysely";
import { leadFieldSql } from "../field-sql.js";
import { LEAD_FIELDS, type LeadField } from "../fields.js";
import {
  MASKED_EMAIL_FIELDS,
  MASKED_EMAIL_LIST_FIELDS,
  MASKED_PHONE_FIELDS,
  MASKED_PHONE_LIST_FIELDS,
} from "../presenter.js";

/**
 * maskPhone (src/leads/presenter.ts) in SQL, on a text value: the digits (ASCII 0-9) without a
 * leading US `1` of an 11-digit number; fewer than 7 digits give `***`, otherwise the area code
 * and the last two digits, `(512) ***-**42`. Null stays null.
 */
export function maskPhoneSql(value: RawBuilder<unknown>): RawBuilder<string | null> {
  // Inline (no subquery per value): PostgreSQL evaluates only the branch taken.
  const digits = sql<string>`regexp_replace(${value}, '[^0-9]', '', 'g')`;
  return sql<string | null>`case
    when ${value} is null then null
    when length(${digits}) < 7 then '***'
    when length(${digits}) = 11 and left(${digits}, 1) = '1'
      then '(' || substr(${digits}, 2, 3) || ') ***-**' || right(${digits}, 2)
    else '(' || left(${digits}, 3) || ') ***-**' || right(${digits}, 2) end`;
}

/**
 * maskEmail (src/leads/presenter.ts) in SQL, on a text value: without an `@` after the first
 * character `***`; otherwise the first three characters of the part before the last `@` (one
 * fewer than its length when it has 3 or fewer, at least one), `*`, and the rest from that `@`:
 * `hel*@domain.com`. Null stays null. Characters are counted as code points (maskEmail counts
 * UTF-16 units: the two differ only for characters outside the Basic Multilingual Plane in the
 * first four characters, where maskEmail would cut a surrogate pair).
 */
export function maskEmailSql(value: RawBuilder<unknown>): RawBuilder<string | null> {
  // r: the last `@`, counted from the end (0: none).
  const text = sql<string>`(${value})::text`;
  const r = sql<number>`strpos(reverse(${text}), '@')`;
  return sql<string | null>`case
    when ${value} is null then null
    when ${r} = 0 or ${r} = length(${text}) then '***'
    else left(${text}, case when length(${text}) - ${r} > 3 then 3 else greatest(1, length(${text}) - ${r} - 1) end)
      || '*' || right(${text}, ${r}) end`;
}

/** Each item of a text array masked by `mask`, in order; a null item becomes `***` (toMaskedLead). */
function maskItems(
  list: RawBuilder<unknown>,
  mask: (item: RawBuilder<unknown>) => RawBuilder<string | null>,
): RawBuilder<unknown> {
  // Most lists are empty: no subquery for them.
  return sql`case when coalesce(cardinality(${list}), 0) = 0 then ${list} else array(
    select coalesce(${mask(sql`i.item`)}, '***') from unnest(${list}) with ordinality i(item, n) order by i.n) end`;
}

const PHONES: ReadonlySet<string> = new Set(MASKED_PHONE_FIELDS);
const EMAILS: ReadonlySet<string> = new Set(MASKED_EMAIL_FIELDS);
const PHONE_LISTS: ReadonlySet<string> = new Set(MASKED_PHONE_LIST_FIELDS);
const EMAIL_LISTS: ReadonlySet<string> = new Set(MASKED_EMAIL_LIST_FIELDS);

/**
 * A field's value in the API's Lead (as leadJsonSql writes it: an unknown list `[]`, an unknown
 * object `{}`), masked when `masked` holds and the field is one toMaskedLead masks.
 */
function previewValueSql(field: LeadField, alias: string, masked: RawBuilder<boolean>): RawBuilder<unknown> {
  const raw = leadFieldSql(field, alias);
  const value =
    field.type === "list" && !field.nullable
      ? sql`coalesce(${raw}, '{}')`
      : field.type === "object"
        ? sql`coalesce(${raw}, '{}'::jsonb)`
        : raw;
  let maskedValue: RawBuilder<unknown> | null = null;
  if (PHONES.has(field.name)) maskedValue = maskPhoneSql(value);
  else if (EMAILS.has(field.name)) maskedValue = maskEmailSql(value);
  else if (PHONE_LISTS.has(field.name)) maskedValue = maskItems(value, maskPhoneSql);
  else if (EMAIL_LISTS.has(field.name)) maskedValue = maskItems(value, maskEmailSql);
  return maskedValue === null ? value : sql`case when ${masked} then ${maskedValue} else ${value} end`;
}

/**
 * A lead of a preview as JSON text, built by PostgreSQL from the `leads` row `alias` (docs/leads.md
 * "GET /leads/preview"): the API's Lead as leadJsonSql writes it, fields in
 * the same order, then `contactExported` (`received`). On a lead the account has not received
 * (`received` false) the contact fields are masked as toMaskedLead masks them (the same lists of
 * fields, maskPhoneSql and maskEmailSql). test/leads-preview.test.ts compares the two.
 */
export function previewLeadJsonSql(alias: string, received: RawBuilder<boolean>): RawBuilder<string> {
  const masked = sql<boolean>`not coalesce(${received}, false)`;
  const columns = LEAD_FIELDS.map(
    (field) => sql`${previewValueSql(field, alias, masked)} as ${sql.id(field.name)}`,
  );
  columns.push(sql`coalesce(${received}, false) as ${sql.id("contactExported")}`);
  // row_to_json writes the columns in order, without spaces (as leadJsonSql).
  return sql<string>`(select row_to_json(lead_json)::text from (select ${sql.join(columns)}) lead_json)`;
}
