import {
  AD_PIXELS,
  ADDRESS_SOURCES,
  AREA_SHAPES,
  BOOKING_OPS_CRM_SOFTWARE,
  BUYING_SIGNALS,
  DESCRIPTION_SHAPES,
  EMAIL_BOXES,
  FIRST_NAMES,
  FREE_MAIL,
  FREE_MAIL_PROVIDERS,
  GENERIC_SCHEMA_TYPES,
  HOURS,
  LAST_NAMES,
  LOGO_PATHS,
  MAIL_PROVIDERS,
  MARKETING_EMAIL_SOFTWARE,
  NAME_SHAPES,
  NAME_WORDS,
  OFFERS,
  PAYMENT_FINANCING_SOFTWARE,
  PLATFORMS,
  REPUTATION_CHAT_SOFTWARE,
  SLOGAN_SHAPES,
  STATES,
  STREET_NAMES,
  STREET_SUFFIXES,
  TLDS,
  TRADES,
  WEB_TECHNOLOGIES,
  type StateInfo,
} from "./generate-data.js";
import type { LeadImportRecord } from "./record.js";

/**
 * The "now" of generated data. Fixed, so a seed gives the same leads on any day; buying signals
 * fall in the 18 months before it.
 */
export const GENERATOR_REFERENCE_DATE = Date.UTC(2026, 10, 1);

const DAY_MS = 86_400_000;

/** A small seeded PRNG (mulberry32): uniform floats in [0, 1). */
class Random {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }
  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }
  /** `count` distinct items (fewer if the list is shorter), in list order. */
  some<T>(items: readonly T[], count: number): T[] {
    const chosen = new Set<number>();
    while (chosen.size < Math.min(count, items.length)) chosen.add(Math.floor(this.next() * items.length));
    return [...chosen].sort((a, b) => a - b).map((i) => items[i] as T);
  }
}

/** A 32-bit hash of (seed, n) (murmur3's finaliser), so lead n does not depend on leads before it. */
function leadSeed(seed: number, n: number): number {
  let h = (Math.imul(seed >>> 0, 0x9e3779b1) ^ n) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/'/g, "")
    .replace(/\b(llc|co|the|of|and)\b/g, " ")
    .replace(/&/g, " ")
    .replace(/[^a-z0-9]+/g, " ")
    .trim();
}

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

function fill(shape: string, values: Record<string, string>): string {
  return shape.replace(/\{(\w+)\}/g, (_, key: string) => values[key] ?? "");
}

function phone(r: Random, area: string): string {
  return `(${area}) 555-${String(r.int(0, 9999)).padStart(4, "0")}`;
}

function socialPage(r: Random, handle: string, citySlug: string): string {
  switch (r.int(0, 5)) {
    case 0:
      return `https://www.facebook.com/${handle}`;
    case 1:
      return `https://www.instagram.com/${handle}/`;
    case 2:
      return `https://www.yelp.com/biz/${handle}-${citySlug}`;
    case 3:
      return `https://sites.google.com/view/${handle}`;
    case 4:
      return `https://${handle}.business.site/`;
    default:
      return `https://linktr.ee/${handle}`;
  }
}

/** What addSiteFacts knows of a lead beyond its record. */
interface LeadContext {
  state: StateInfo;
  city: StateInfo["cities"][number];
  /** The registered site's domain; null without a site. */
  domain: string | null;
  tradeWord: string;
  first: string;
  last: string;
  founded: number;
  signalAt: number;
  signals: readonly string[];
}

const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

/** One to `max` distinct names of `items`, comma-separated (the software columns). */
function names(r: Random, items: readonly string[], max: number): string {
  return r.some(items, r.int(1, max)).join(", ");
}

/**
 * The facts a crawl of the lead's site and its records gives (registration date, redirect, crawl
 * time, MX providers and e-mail security, founder contacts, coordinates, the schema.org details,
 * the software found, job postings, the site's rating, DUNS number), drawn from `r` and set on
 * `lead` in catalogue order. Mostly only for leads with a site, and each only sometimes.
 */
function addSiteFacts(lead: LeadImportRecord, r: Random, c: LeadContext): void {
  const site = c.domain !== null;
  const crawledElsewhere =
    c.domain !== null && lead.crawledUrl != null && !lead.crawledUrl.includes(c.domain);
  const fresh = c.signals.some((s) => s === "new_domain" || s === "new_website" || s === "new_registration");
  const domainMx = site && r.chance(0.9) ? r.pick(MAIL_PROVIDERS) : null;
  const mailDomain = lead.email ? lead.email.slice(lead.email.lastIndexOf("@") + 1) : null;
  const big = domainMx === "google.com" || domainMx === "outlook.com";
  const security = domainMx
    ? [
        ["spf", big ? 0.95 : 0.8],
        ["dkim", big ? 0.75 : 0.4],
        ["dmarc", big ? 0.5 : 0.3],
      ]
        .filter(([, p]) => r.chance(p as number))
        .map(([name]) => name as string)
    : [];
  if (security.includes("dmarc") && r.chance(0.06)) security.push("bimi");
  const founded = lead.founders !== null && lead.founders !== undefined && lead.founders.length > 0;
  const located = (lead.city ?? lead.address ?? null) !== null && r.chance(0.96);

  lead.emailPrimaryProvider =
    mailDomain === null
      ? null
      : mailDomain === c.domain
        ? domainMx
        : (FREE_MAIL_PROVIDERS[mailDomain] ?? null);
  lead.websiteEmailProvider = domainMx;
  lead.websiteEmailSecurity = domainMx ? (security.length > 0 ? security : ["none"]) : [];
  lead.addressFull = lead.address
    ? [lead.address, lead.city, `${lead.state}${lead.zip ? ` ${lead.zip}` : ""}`].filter(Boolean).join(", ")
    : null;
  lead.addressSource = lead.address ? r.pick(ADDRESS_SOURCES) : null;
  // Within about 4 km of the city centre: inside the state.
  lead.latitude = located ? round(c.city.latitude + (r.next() - 0.5) * 0.08, 6) : null;
  lead.longitude = located ? round(c.city.longitude + (r.next() - 0.5) * 0.08, 6) : null;
  lead.ratingValue =
    site && (lead.websiteSchemaTypes?.length ?? 0) > 0 && r.chance(0.3)
      ? Math.min(5, lead.stars ?? round(3.8 + 1.2 * Math.sqrt(r.next()), 1))
      : null;
  lead.registrationDate = site
    ? dateOf(
        fresh && r.chance(0.8)
          ? c.signalAt - r.int(0, 120) * DAY_MS
          : Math.min(Date.UTC(r.int(1997, 2025), r.int(0, 11), r.int(1, 28)), c.signalAt),
      )
    : null;
  lead.redirect = site ? crawledElsewhere || r.chance(0.02) : null;
  lead.timeScraped = lead.crawledUrl
    ? new Date(Math.floor((GENERATOR_REFERENCE_DATE - r.next() * 60 * DAY_MS) / 1000) * 1000).toISOString()
    : null;
  lead.openPositions =
    site && r.chance(0.15)
      ? r.chance(0.3)
        ? 0
        : Math.min(12, 1 + Math.floor(-Math.log(1 - r.next()) * 2))
      : null;
  lead.duns = r.chance(0.08) ? String(r.int(10_000_000, 999_999_999)).padStart(9, "0") : null;
  lead.founderEmails =
    founded && r.chance(0.5)
      ? [site ? `${c.first}@${c.domain}` : `${c.first}.${c.last}@${r.pick(FREE_MAIL)}`]
      : [];
  lead.founderPhones = founded && r.chance(0.3) ? [phone(r, c.city.area)] : [];
  lead.areaServed = r.chance(0.3)
    ? fill(r.pick(AREA_SHAPES), { city: c.city.name, state: c.state.code })
    : null;
  lead.offers = site && r.chance(0.2) ? r.pick(OFFERS) : null;
  lead.brand = site && r.chance(0.15) ? (lead.companyName ?? "").replace(/ (LLC|Co\.)$/, "") : null;
  lead.slogan = r.chance(0.2)
    ? fill(r.pick(SLOGAN_SHAPES), {
        trade: c.tradeWord,
        city: c.city.name,
        year: String(new Date(c.founded).getUTCFullYear()),
      })
    : null;
  lead.logoUrl = site && r.chance(0.5) ? `https://www.${c.domain}${r.pick(LOGO_PATHS)}` : null;
  lead.platform = site && r.chance(0.85) ? r.pick(PLATFORMS) : null;
  lead.bookingOpsCrmSoftware = site && r.chance(0.25) ? names(r, BOOKING_OPS_CRM_SOFTWARE, 2) : null;
  lead.reputationChatSoftware = site && r.chance(0.18) ? names(r, REPUTATION_CHAT_SOFTWARE, 2) : null;
  lead.marketingEmailSoftware = site && r.chance(0.22) ? names(r, MARKETING_EMAIL_SOFTWARE, 2) : null;
  lead.adPixels = site && r.chance(0.35) ? names(r, AD_PIXELS, 3) : null;
  lead.paymentFinancingSoftware = site && r.chance(0.12) ? names(r, PAYMENT_FINANCING_SOFTWARE, 2) : null;
}

/** Lead `n` (from 1) of seed `seed`: a realistic, entirely made-up US small business. */
export function generateLead(seed: number, n: number): LeadImportRecord {
  const r = new Random(leadSeed(seed, n));
  const trade = r.pick(TRADES);
  const state = r.pick(STATES);
  const city = r.pick(state.cities);
  const word = r.pick(NAME_WORDS);
  let word2 = r.pick(NAME_WORDS);
  if (word2 === word) word2 = "Pro";
  const companyName = fill(r.pick(NAME_SHAPES), { w: word, w2: word2, t: r.pick(trade.names), c: city.name });

  const words = slug(companyName).split(" ");
  const citySlug = slug(city.name).replace(/ /g, "");
  const base = r.chance(0.2) ? words.join("-") : words.join("");
  const domain =
    base.slice(0, 30) +
    [``, ``, citySlug, `-${state.code.toLowerCase()}`, `of${citySlug}`][r.int(0, 4)] +
    r.pick(TLDS);
  const hasSite = r.chance(0.88);
  const registeredUrl = hasSite
    ? `${r.chance(0.85) ? "https" : "http"}://${r.chance(0.6) ? "www." : ""}${domain}`
    : null;
  let crawledUrl: string | null = null;
  if (registeredUrl) {
    const kind = r.next();
    if (kind < 0.65) crawledUrl = `https://www.${domain}/`;
    else if (kind < 0.8)
      crawledUrl = `https://www.${domain}/${r.pick(["home", "index.html", "en/", "welcome"])}`;
    else if (kind < 0.9) crawledUrl = `https://${words.join("")}${citySlug}.com/`;
  } else if (r.chance(0.85)) {
    crawledUrl = socialPage(r, words.join(""), citySlug);
  }

  const first = r.pick(FIRST_NAMES);
  const last = r.pick(LAST_NAMES);
  const mailDomain = registeredUrl ? domain : r.pick(FREE_MAIL);
  const box = registeredUrl ? r.pick(EMAIL_BOXES) : `${words.join("").slice(0, 20)}${r.int(1, 99)}`;
  const email = r.chance(0.85) ? `${box}@${mailDomain}` : null;
  const personal = `${first}${r.chance(0.5) ? "." : ""}${last}@${mailDomain}`;
  const tiers = [0.4, 0.3, 0.2, 0.12, 0.08, 0.05].map((p, i) =>
    email && r.chance(p) ? (i === 0 ? personal : `${r.pick(EMAIL_BOXES)}${i}@${mailDomain}`) : null,
  );
  const phoneNumber = r.chance(0.9) ? phone(r, city.area) : null;

  const signalAt = GENERATOR_REFERENCE_DATE - Math.floor(r.next() * 548 * DAY_MS);
  const updatedAt = signalAt + Math.floor(r.next() * (GENERATOR_REFERENCE_DATE - signalAt));
  const signals = r.some(BUYING_SIGNALS, r.chance(0.7) ? 1 : 2);
  if (!registeredUrl && !signals.includes("new_social_profile")) signals[0] = "new_social_profile";
  const hasRating = r.chance(0.8);
  const stars = hasRating ? Math.round((2.5 + 2.5 * Math.sqrt(r.next())) * 10) / 10 : null;
  const founded = signals.includes("new_registration")
    ? signalAt - r.int(0, 60) * DAY_MS
    : Date.UTC(r.int(1965, 2024), r.int(0, 11), r.int(1, 28));
  const description = fill(r.pick(DESCRIPTION_SHAPES), {
    name: companyName,
    city: city.name,
    state: state.code,
    does: trade.does,
    year: String(new Date(founded).getUTCFullYear()),
  });
  const locations = r.chance(0.3) ? (r.chance(0.7) ? 1 : r.int(2, 12)) : null;
  const handle = words.join("");

  const lead: LeadImportRecord = {
    id: `gen-${seed}-${n}`,
    companyName,
    registeredUrl,
    crawledUrl,
    email,
    emailSecondary: email && r.chance(0.3) ? `${r.pick(EMAIL_BOXES)}@${mailDomain}` : null,
    emailTier1: tiers[0] ?? null,
    emailTier2: tiers[1] ?? null,
    emailTier3: tiers[2] ?? null,
    emailTier4: tiers[3] ?? null,
    emailTier5: tiers[4] ?? null,
    emailTier6: tiers[5] ?? null,
    phone: phoneNumber,
    phoneSecondary: phoneNumber && r.chance(0.25) ? phone(r, city.area) : null,
    address: r.chance(0.92)
      ? `${r.int(100, 9999)} ${r.pick(STREET_NAMES)} ${r.pick(STREET_SUFFIXES)}${r.chance(0.15) ? `, Suite ${r.int(100, 450)}` : ""}`
      : null,
    city: r.chance(0.97) ? city.name : null,
    state: state.code,
    zip: r.chance(0.95) ? `${city.zip}${String(r.int(0, 99)).padStart(2, "0")}` : null,
    country: "US",
    category: r.chance(0.95) ? trade.category : null,
    description: r.chance(0.8) ? description : null,
    longDescription: r.chance(0.25)
      ? `${description} ${companyName} serves customers in ${city.name} and the surrounding ${state.code} area; call or visit the website for hours, pricing and availability.`
      : null,
    aiCategoryEstimation: r.chance(0.75) ? r.some(trade.ai, r.int(1, 3)) : null,
    stars,
    reviewCount: hasRating ? Math.floor(Math.exp(r.next() * 7.5)) : r.chance(0.5) ? 0 : null,
    websiteSchemaTypes:
      registeredUrl && r.chance(0.7)
        ? ["LocalBusiness", trade.schemaType, ...(r.chance(0.3) ? [r.pick(GENERIC_SCHEMA_TYPES)] : [])]
        : [],
    lastBuyingSignal: new Date(signalAt).toISOString(),
    buyingSignalType: signals,
    lastUpdated: new Date(updatedAt).toISOString(),
    legalName: r.chance(0.35)
      ? `${companyName.replace(/ (LLC|Co\.)$/, "")} ${r.pick(["LLC", "Inc.", "LLC", "Corp."])}`
      : null,
    employees: r.chance(0.5) ? Math.max(1, Math.floor(Math.exp(r.next() * 5))) : null,
    foundedDate: r.chance(0.4) ? new Date(founded).toISOString().slice(0, 10) : null,
    numberOfLocations: locations,
    isChain: locations !== null ? locations >= 3 : r.chance(0.2) ? false : null,
    priceRange: trade.priced && r.chance(0.6) ? "$".repeat(r.int(1, 4)) : null,
    naicsCode: r.chance(0.5) ? trade.naics : null,
    founders: r.chance(0.15) ? [`${capitalize(first)} ${capitalize(last)}`] : [],
    openingHours: r.chance(0.55) ? r.pick(HOURS) : null,
    socialProfiles: Object.fromEntries(
      [
        ["facebook", 0.5, `https://www.facebook.com/${handle}`],
        ["instagram", 0.35, `https://www.instagram.com/${handle}/`],
        ["linkedin", 0.2, `https://www.linkedin.com/company/${handle}`],
        ["yelp", 0.25, `https://www.yelp.com/biz/${handle}-${citySlug}`],
      ]
        .filter(([, p]) => r.chance(p as number))
        .map(([network, , url]) => [network, url]),
    ) as Record<string, string>,
    webTechnologies: registeredUrl && r.chance(0.65) ? r.some(WEB_TECHNOLOGIES, r.int(1, 4)) : [],
  };
  // The fields added later come from a second PRNG of the lead, so the ones above stay as they were.
  addSiteFacts(lead, new Random(leadSeed(seed, n) ^ 0x5bd1e995), {
    state,
    city,
    domain: registeredUrl ? domain : null,
    tradeWord: (trade.names[0] as string).toLowerCase(),
    first,
    last,
    founded,
    signalAt,
    signals,
  });
  return lead;
}

/**
 * `count` synthetic leads of `seed`, lazily (so a million need no memory). The same seed gives
 * the same leads; lead ids are `gen-<seed>-<n>`, so importing them again updates them.
 */
export function* generateLeads(count: number, seed: number): Generator<LeadImportRecord> {
  for (let n = 1; n <= count; n += 1) yield generateLead(seed, n);
}
