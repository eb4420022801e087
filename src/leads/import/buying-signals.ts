import { sql, type RawBuilder } from "kysely";

/**
 * How an import moves a lead's Last Buying Signal (`last_buying_signal`) and `buyingSignalType`
 * (docs/leads.md, "Buying signals"): a new lead is `Newly Added` (unless its record carries a
 * signal of its own); an existing lead moves to the import time with the reasons of this change
 * when a new non-empty value differs from the stored one in one of the fields below, or a social
 * profile is added or changed. Removing a value, or changing any other field, keeps the stored
 * signal.
 */
export const BUYING_SIGNAL = {
  newlyAdded: "Newly Added",
  primaryPhone: "Primary Phone",
  totalPhones: "Total Phones",
  primaryEmail: "Primary Email",
  emailTier1: "Tier 1 Email",
  emailTier2: "Tier 2 Email",
  fullAddress: "Full Address",
} as const;

/**
 * Social profile types, one per source, in the order they are listed; `keys` are the
 * `socialProfiles` keys (lower-cased, letters and digits only) of the source. Any other key is
 * `Other Social`.
 */
export const SOCIAL_SIGNALS: readonly { type: string; keys: readonly string[] }[] = [
  { type: "Instagram", keys: ["instagram"] },
  { type: "LinkedIn", keys: ["linkedin"] },
  { type: "Facebook", keys: ["facebook"] },
  { type: "YouTube", keys: ["youtube"] },
  { type: "TikTok", keys: ["tiktok"] },
  { type: "X (Twitter)", keys: ["x", "twitter", "xtwitter"] },
  { type: "Google Maps", keys: ["googlemaps", "google", "googlebusiness", "googlebusinessprofile", "gmb"] },
  { type: "Yelp", keys: ["yelp"] },
  { type: "Pinterest", keys: ["pinterest"] },
  { type: "Other Social", keys: [] },
];

const OTHER_SOCIAL = "Other Social";

const isSet = (ref: RawBuilder<unknown>) => sql`coalesce(btrim(${ref}), '') <> ''`;
const phoneDigits = (ref: RawBuilder<unknown>) => sql`regexp_replace(${ref}, '[^0-9]', '', 'g')`;
const phoneCount = (row: string) =>
  sql`(${isSet(sql.ref(`${row}.phone`))})::int + (${isSet(sql.ref(`${row}.phone_secondary`))})::int`;

/** `reason` when the new value of a text column is set and differs from the stored one. */
function changedTo(
  column: string,
  reason: string,
  normalise: (ref: RawBuilder<unknown>) => RawBuilder<unknown> = (ref) => ref,
): RawBuilder<unknown> {
  const fresh = sql.ref(`excluded.${column}`);
  const stored = sql.ref(`leads.${column}`);
  return sql`case when ${isSet(fresh)} and ${normalise(fresh)} is distinct from ${normalise(stored)}
    then ${reason}::text end`;
}

/**
 * Whether the address gets a new value: the full address or a part of it set and different from
 * the stored one.
 */
function addressChanged(): RawBuilder<unknown> {
  const parts = ["address_full", "street", "city", "state", "zip"].map((c) => {
    const fresh = sql.ref(`excluded.${c}`);
    return sql`(${isSet(fresh)} and btrim(${fresh}) is distinct from btrim(${sql.ref(`leads.${c}`)}))`;
  });
  return sql`case when ${sql.join(parts, sql` or `)} then ${BUYING_SIGNAL.fullAddress}::text end`;
}

/** The social profile types added or changed, in list order (`{}` when none). */
function socialChanges(): RawBuilder<unknown> {
  const when = SOCIAL_SIGNALS.flatMap((s) => s.keys.map((k) => sql`when ${sql.lit(k)} then ${s.type}::text`));
  const order = SOCIAL_SIGNALS.map((s, i) => sql`(${s.type}::text, ${sql.lit(i)})`);
  return sql`case when excluded.social_profiles = leads.social_profiles then '{}'::text[] else array(
    select t.type from (values ${sql.join(order)}) as t(type, ord)
    where t.type in (
      select case regexp_replace(lower(p.key), '[^a-z0-9]', '', 'g') ${sql.join(when, sql` `)}
        else ${OTHER_SOCIAL}::text end
      from jsonb_each_text(excluded.social_profiles) as p(key, value)
      where btrim(p.value) <> '' and p.value is distinct from (leads.social_profiles ->> p.key))
    order by t.ord) end`;
}

/**
 * The reasons an import's update of an existing lead moves its buying signal, as a `text[]` (empty
 * when it does not move), over `leads` (the stored row) and `excluded` (the imported one) of an
 * `INSERT ... ON CONFLICT DO UPDATE`.
 */
export function buyingSignalReasons(): RawBuilder<string[]> {
  const fields = [
    changedTo("phone", BUYING_SIGNAL.primaryPhone, phoneDigits),
    sql`case when ${phoneCount("excluded")} > ${phoneCount("leads")} then ${BUYING_SIGNAL.totalPhones}::text end`,
    changedTo("email", BUYING_SIGNAL.primaryEmail, (r) => sql`lower(btrim(${r}))`),
    changedTo("email_tier1", BUYING_SIGNAL.emailTier1, (r) => sql`lower(btrim(${r}))`),
    changedTo("email_tier2", BUYING_SIGNAL.emailTier2, (r) => sql`lower(btrim(${r}))`),
    addressChanged(),
  ];
  return sql<string[]>`array_cat(array_remove(array[${sql.join(fields)}]::text[], null), ${socialChanges()})`;
}
