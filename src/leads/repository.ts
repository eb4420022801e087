import type { Selectable } from "kysely";
import type { DbOrTrx } from "../db/database.js";
import type { LeadsTable } from "../db/schema/leads.js";
import type { LeadRecord } from "./lead.js";

type LeadRow = Selectable<LeadsTable>;

/** Every column a LeadRecord is built from. */
export const LEAD_RECORD_COLUMNS = [
  "id",
  "external_id",
  "company_name",
  "legal_name",
  "registered_url",
  "crawled_url",
  "email",
  "email_secondary",
  "email_tier1",
  "email_tier2",
  "email_tier3",
  "email_tier4",
  "email_tier5",
  "email_tier6",
  "phone",
  "phone_secondary",
  "street",
  "city",
  "state",
  "zip",
  "country",
  "category",
  "description",
  "long_description",
  "ai_category_estimation",
  "stars",
  "review_count",
  "website_schema_types",
  "last_buying_signal",
  "buying_signal_type",
  "last_updated",
  "employees",
  "founded_date",
  "number_of_locations",
  "is_chain",
  "price_range",
  "naics_code",
  "founders",
  "opening_hours",
  "social_profiles",
  "web_technologies",
] as const satisfies readonly (keyof LeadsTable)[];

/** The columns of a lead row that a LeadRecord is built from. */
export type LeadRecordRow = Pick<LeadRow, (typeof LEAD_RECORD_COLUMNS)[number]>;

/** `YYYY-MM-DD` of a date column (node-postgres may give a local-midnight Date or a string). */
function plainDate(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) {
    const pad = (n: number) => String(n).padStart(2, "0");
    return `${value.getFullYear()}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`;
  }
  return String(value).slice(0, 10);
}

const toDate = (value: Date | string | null): Date | null =>
  value === null || value === undefined ? null : value instanceof Date ? value : new Date(value);

/** Builds the domain form of a lead from its row. */
export function leadRecordFromRow(row: LeadRecordRow): LeadRecord {
  return {
    id: row.id,
    externalId: row.external_id,
    companyName: row.company_name,
    legalName: row.legal_name,
    registeredUrl: row.registered_url,
    crawledUrl: row.crawled_url,
    email: row.email,
    emailSecondary: row.email_secondary,
    emailTier1: row.email_tier1,
    emailTier2: row.email_tier2,
    emailTier3: row.email_tier3,
    emailTier4: row.email_tier4,
    emailTier5: row.email_tier5,
    emailTier6: row.email_tier6,
    phone: row.phone,
    phoneSecondary: row.phone_secondary,
    street: row.street,
    city: row.city,
    state: row.state,
    zip: row.zip,
    country: row.country,
    category: row.category,
    description: row.description,
    longDescription: row.long_description,
    aiCategoryEstimation: row.ai_category_estimation,
    stars: row.stars === null || row.stars === undefined ? null : Number(row.stars),
    reviewCount: row.review_count,
    websiteSchemaTypes: row.website_schema_types ?? [],
    lastBuyingSignal: toDate(row.last_buying_signal),
    buyingSignalType: row.buying_signal_type ?? [],
    lastUpdated: toDate(row.last_updated),
    employees: row.employees,
    foundedDate: plainDate(row.founded_date),
    numberOfLocations: row.number_of_locations,
    isChain: row.is_chain,
    priceRange: row.price_range,
    naicsCode: row.naics_code,
    founders: row.founders ?? [],
    openingHours: row.opening_hours,
    socialProfiles: (row.social_profiles as Record<string, string> | null) ?? {},
    webTechnologies: row.web_technologies ?? [],
  };
}

/** The leads with these ids, in the order of `ids` (ids not in the database are left out). */
export async function findLeadsByIds(db: DbOrTrx, ids: readonly number[]): Promise<LeadRecord[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom("leads")
    .select(LEAD_RECORD_COLUMNS)
    .where("id", "in", [...ids])
    .execute();
  const byId = new Map(rows.map((row) => [row.id, leadRecordFromRow(row)]));
  return ids.flatMap((id) => {
    const lead = byId.get(id);
    return lead ? [lead] : [];
  });
}
