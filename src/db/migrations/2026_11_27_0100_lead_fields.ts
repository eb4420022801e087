import { type Kysely, sql } from "kysely";

/**
 * The lead fields the real service's search model and lead export need (docs/compatibility.md):
 * registration date, redirect, time scraped, full address and its source, e-mail providers and
 * security, founder e-mails and phones, coordinates, company details, the platform and software
 * columns, open positions, rating value and DUNS number. Added to `leads` and, in the same order,
 * to `lead_versions`, whose rows are copies of `leads` rows (`insert ... select (gone).*`).
 * Nullable columns and constant defaults: no table rewrite, at any size.
 */
const COLUMNS: readonly [string, string][] = [
  ["registration_date", "date"],
  ["redirect", "boolean"],
  ["time_scraped", "timestamptz"],
  ["address_full", "text"],
  ["address_source", "text"],
  ["email_primary_mx", "text"],
  ["email_domain_mx", "text"],
  ["email_security", "text[] not null default '{}'"],
  ["founder_emails", "text[] not null default '{}'"],
  ["founder_phones", "text[] not null default '{}'"],
  ["latitude", "double precision"],
  ["longitude", "double precision"],
  ["area_served", "text"],
  ["offers", "text"],
  ["brand", "text"],
  ["slogan", "text"],
  ["logo_url", "text"],
  ["platform", "text"],
  ["booking_ops_crm_software", "text"],
  ["reputation_chat_software", "text"],
  ["marketing_email_software", "text"],
  ["ad_pixels", "text"],
  ["payment_financing_software", "text"],
  ["open_positions", "integer"],
  ["rating_value", "double precision"],
  ["duns", "text"],
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ["leads", "lead_versions"]) {
    const additions = COLUMNS.map(([name, type]) => sql.raw(`add column ${name} ${type}`));
    await sql`alter table ${sql.table(table)} ${sql.join(additions)}`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["leads", "lead_versions"]) {
    const drops = COLUMNS.map(([name]) => sql.raw(`drop column ${name}`));
    await sql`alter table ${sql.table(table)} ${sql.join(drops)}`.execute(db);
  }
}
