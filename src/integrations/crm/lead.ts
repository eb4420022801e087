/**
 * A lead as the CRM adapters write it, read from any of the three `lead.created` shapes (a flat
 * lead summary, an own-data push `{lead, source: manual_push}`, a test `{test, message, sample}`)
 * or a `lead.updated` summary. Values are trimmed strings; empty ones are absent.
 */
export interface CrmLead {
  /** The service's lead id (absent for own data; 0 for the test sample). */
  id?: number;
  values: Record<string, string>;
}

/** The service's lead fields that can be mapped to CRM fields (`smbFields`). */
export const SMB_FIELDS: readonly { id: string; label: string; type: string }[] = [
  { id: "id", label: "Lead id", type: "number" },
  { id: "companyName", label: "Company name", type: "string" },
  { id: "website", label: "Website", type: "string" },
  { id: "email", label: "E-mail", type: "string" },
  { id: "emailSecondary", label: "Secondary e-mail", type: "string" },
  { id: "phone", label: "Phone", type: "string" },
  { id: "phoneSecondary", label: "Secondary phone", type: "string" },
  { id: "address", label: "Street address", type: "string" },
  { id: "city", label: "City", type: "string" },
  { id: "state", label: "State", type: "string" },
  { id: "zip", label: "ZIP code", type: "string" },
  { id: "country", label: "Country", type: "string" },
  { id: "category", label: "Category", type: "string" },
  { id: "description", label: "Description", type: "string" },
  { id: "lastBuyingSignal", label: "Last buying signal", type: "date" },
  { id: "buyingSignalType", label: "Buying signals", type: "string" },
];

const SMB_FIELD_IDS = new Set(SMB_FIELDS.map((f) => f.id));

export function isSmbField(id: string): boolean {
  return SMB_FIELD_IDS.has(id);
}

function text(value: unknown): string | undefined {
  if (typeof value === "string") return value.trim() || undefined;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (Array.isArray(value)) {
    const parts = value.filter((v): v is string => typeof v === "string" && v.trim() !== "");
    return parts.length > 0 ? parts.join("; ") : undefined;
  }
  return undefined;
}

/** The lead of an event's data. */
export function crmLeadOf(data: unknown): CrmLead {
  const d = (data && typeof data === "object" ? data : {}) as Record<string, unknown>;
  const source =
    d.test === true && d.sample && typeof d.sample === "object"
      ? (d.sample as Record<string, unknown>)
      : d.source === "manual_push" && d.lead && typeof d.lead === "object"
        ? (d.lead as Record<string, unknown>)
        : d;
  const values: Record<string, string> = {};
  for (const { id } of SMB_FIELDS) {
    const value = text(source[id]);
    if (value !== undefined) values[id] = value;
  }
  const id = d.source === "manual_push" ? undefined : source.id;
  return typeof id === "number" && Number.isInteger(id) ? { id, values } : { values };
}

/** Hosts of social networks and listing sites: a lead whose website is one of them has none of its own. */
const NOT_OWN_SITE = [
  "facebook.com",
  "fb.com",
  "instagram.com",
  "linkedin.com",
  "twitter.com",
  "x.com",
  "tiktok.com",
  "youtube.com",
  "pinterest.com",
  "yelp.com",
  "yellowpages.com",
  "bbb.org",
  "angi.com",
  "angieslist.com",
  "homeadvisor.com",
  "thumbtack.com",
  "houzz.com",
  "nextdoor.com",
  "mapquest.com",
  "foursquare.com",
  "manta.com",
  "google.com",
  "goo.gl",
  "business.site",
  "linktr.ee",
];

/**
 * The domain of the lead's own website (lower case, without `www.`), or undefined when it has
 * none: no website, one that is not a URL, or a social or listing page.
 */
export function ownDomain(website: string | undefined): string | undefined {
  if (!website) return undefined;
  let host: string;
  try {
    host = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(website) ? website : `https://${website}`).hostname;
  } catch {
    return undefined;
  }
  host = host
    .toLowerCase()
    .replace(/\.$/, "")
    .replace(/^www\./, "");
  if (!host.includes(".")) return undefined;
  if (NOT_OWN_SITE.some((site) => host === site || host.endsWith(`.${site}`))) return undefined;
  return host;
}

/** The synthetic lead of a field-mapping dry run: every field set, an e-mail nobody owns. */
export function syntheticLead(marker: string): CrmLead {
  return {
    id: 0,
    values: {
      id: "0",
      companyName: `Mapping Test ${marker}`,
      website: `https://mapping-test-${marker}.example.com`,
      email: `mapping-test-${marker}@example.com`,
      emailSecondary: `mapping-test-2-${marker}@example.com`,
      phone: "+1 512 555 0100",
      phoneSecondary: "+1 512 555 0101",
      address: "100 Sample St",
      city: "Austin",
      state: "TX",
      zip: "78701",
      country: "US",
      category: "Plumber",
      description: "A synthetic record of a field mapping test; it is deleted right away.",
      lastBuyingSignal: "2026-11-01T00:00:00.000Z",
      buyingSignalType: "Newly Added",
    },
  };
}
