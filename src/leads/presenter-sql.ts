import { sql, type RawBuilder } from "kysely";

/** `YYYY-MM-DDTHH:MM:SS.sssZ` of a timestamptz, as `Date.toISOString` writes it. */
const isoTimestamp = (column: RawBuilder<unknown>) =>
  sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** 1 when a phone column holds a number (not null, not empty), as leadPhoneTotal counts. */
const hasPhone = (column: RawBuilder<unknown>) => sql`(case when ${column} <> '' then 1 else 0 end)`;

/**
 * The API's Lead of the `leads` row `alias` as JSON text, built by PostgreSQL: the same fields,
 * values and order as toLead (presenter.ts) writes from the LeadRecord of that row, so a page of
 * leads reaches the answer without a row object, a LeadRecord or a Lead object per lead
 * (docs/search.md "Leads as JSON from PostgreSQL"). test/leads-presenter-sql.test.ts compares the
 * two on every kind of value.
 */
export function leadJsonSql(alias: string): RawBuilder<string> {
  const c = (column: string) => sql.ref(`${alias}.${column}`);
  const fields: [string, RawBuilder<unknown>][] = [
    ["id", c("id")],
    ["databaseType", sql`'other'`],
    ["companyName", c("company_name")],
    ["website", sql`coalesce(${c("registered_url")}, ${c("crawled_url")})`],
    ["registeredUrl", c("registered_url")],
    ["crawledUrl", c("crawled_url")],
    ["email", c("email")],
    ["emailSecondary", c("email_secondary")],
    ["emailTier1", c("email_tier1")],
    ["emailTier2", c("email_tier2")],
    ["emailTier3", c("email_tier3")],
    ["emailTier4", c("email_tier4")],
    ["emailTier5", c("email_tier5")],
    ["emailTier6", c("email_tier6")],
    ["phone", c("phone")],
    ["phoneSecondary", c("phone_secondary")],
    ["phoneTotal", sql`${hasPhone(c("phone"))} + ${hasPhone(c("phone_secondary"))}`],
    ["address", c("street")],
    ["street", c("street")],
    ["city", c("city")],
    ["state", c("state")],
    ["zip", c("zip")],
    ["country", c("country")],
    ["category", c("category")],
    ["description", c("description")],
    ["longDescription", c("long_description")],
    ["aiCategoryEstimation", c("ai_category_estimation")],
    ["stars", c("stars")],
    ["reviewCount", c("review_count")],
    ["websiteSchemaTypes", sql`coalesce(${c("website_schema_types")}, '{}')`],
    ["lastBuyingSignal", isoTimestamp(c("last_buying_signal"))],
    ["buyingSignalType", sql`coalesce(${c("buying_signal_type")}, '{}')`],
    ["lastUpdated", isoTimestamp(c("last_updated"))],
    ["employees", c("employees")],
    ["foundedDate", sql`to_char(${c("founded_date")}, 'YYYY-MM-DD')`],
    ["numberOfLocations", c("number_of_locations")],
    ["isChain", c("is_chain")],
    ["priceRange", c("price_range")],
    ["legalName", c("legal_name")],
    ["naicsCode", c("naics_code")],
    ["founders", sql`coalesce(${c("founders")}, '{}')`],
    ["openingHours", c("opening_hours")],
    ["socialProfiles", sql`coalesce(${c("social_profiles")}, '{}'::jsonb)`],
    ["webTechnologies", sql`coalesce(${c("web_technologies")}, '{}')`],
  ];
  // row_to_json writes the columns in order, without spaces (json_build_object adds some).
  const columns = sql.join(fields.map(([name, value]) => sql`${value} as ${sql.id(name)}`));
  return sql<string>`(select row_to_json(lead_json)::text from (select ${columns}) lead_json)`;
}
