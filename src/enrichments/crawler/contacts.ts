import * as cheerio from "cheerio";
import { findPhoneNumbersInText, parsePhoneNumberFromString, type PhoneNumber } from "libphonenumber-js";

/** What one page says about how to reach the business. */
export interface PageContacts {
  /** Lower-cased addresses, most reliable first (mailto links, structured data, text). */
  emails: string[];
  /** US national format `(512) 472-3391` (other countries international), most reliable first. */
  phones: string[];
  /** The business's name from structured data, `og:site_name` or the title, if any. */
  companyName: string | null;
  /** Links on the same site that likely list contact details. */
  contactPage: string | null;
  aboutPage: string | null;
}

const EMAIL = /[a-z0-9][a-z0-9._%+-]{0,63}@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24}/gi;
/** Endings that look like an address but are file names (`logo@2x.png`). */
const NOT_A_TLD = /\.(png|jpe?g|gif|svg|webp|avif|css|js|ico|bmp|tiff?)$/i;
/** Domains of placeholders and of site builders' and monitoring tools' own addresses. */
const IGNORED_DOMAINS =
  /(^|\.)(example\.(com|org|net)|domain\.com|email\.com|sentry\.io|sentry-next\.wixpress\.com|wixpress\.com)$/i;

/** Common ways people write an address so harvesters miss it: `info [at] shop [dot] com`. */
const AT = /\s*[[({<]\s*at\s*[\])}>]\s*/gi;
const DOT = /\s*[[({<]\s*dot\s*[\])}>]\s*/gi;
/** `info AT shop DOT com`: upper-case words only, so `call us at 9` stays as it is. */
const AT_WORD = /(?<=[A-Za-z0-9._%+-])\s+AT\s+(?=[A-Za-z0-9-]+\s+DOT\s+)/g;
const DOT_WORD = /(?<=@[A-Za-z0-9.-]+)\s+DOT\s+(?=[A-Za-z])/g;

/** Rewrites common obfuscations into plain addresses (`joe [at] shop [dot] com` -> `joe@shop.com`). */
export function deobfuscate(text: string): string {
  let out = text.replace(AT, "@").replace(DOT, ".").replace(AT_WORD, "@");
  // `joes DOT co DOT uk`: each pass joins one more label.
  for (let pass = 0; pass < 4 && DOT_WORD.test(out); pass += 1) out = out.replace(DOT_WORD, ".");
  return out;
}

/** The address hidden by Cloudflare's e-mail protection (`data-cfemail`, a hex string XOR-ed with its first byte). */
export function decodeCloudflareEmail(hex: string): string | null {
  if (!/^(?:[0-9a-f]{2}){2,}$/i.test(hex)) return null;
  const key = parseInt(hex.slice(0, 2), 16);
  let out = "";
  for (let i = 2; i < hex.length; i += 2) out += String.fromCharCode(parseInt(hex.slice(i, i + 2), 16) ^ key);
  return out;
}

function cleanEmail(raw: string): string | null {
  const value = raw
    .trim()
    .toLowerCase()
    .replace(/^mailto:/, "");
  let decoded = value;
  try {
    decoded = decodeURIComponent(value);
  } catch {
    // Keep the raw value.
  }
  const address = decoded.split("?")[0]?.trim() ?? "";
  const match = address.match(EMAIL);
  if (!match || match[0] !== address) return null;
  const domain = address.slice(address.indexOf("@") + 1);
  if (NOT_A_TLD.test(address) || IGNORED_DOMAINS.test(domain)) return null;
  return address;
}

function formatPhone(phone: PhoneNumber): string {
  return phone.country === "US" || phone.countryCallingCode === "1"
    ? phone.formatNational()
    : phone.formatInternational();
}

function cleanPhone(raw: string): PhoneNumber | null {
  let value = raw.trim().replace(/^tel:/i, "");
  try {
    value = decodeURIComponent(value);
  } catch {
    // Keep the raw value.
  }
  const phone = parsePhoneNumberFromString(value, "US");
  return phone?.isValid() ? phone : null;
}

/** Collects values in order without repeats. */
class Ordered {
  private readonly seen = new Set<string>();
  readonly values: string[] = [];
  constructor(private readonly limit: number) {}
  add(key: string, value: string): void {
    if (this.seen.has(key) || this.values.length >= this.limit) return;
    this.seen.add(key);
    this.values.push(value);
  }
}

/** Objects of JSON-LD blocks (graphs and arrays flattened, nested values included). */
function jsonLdObjects($: cheerio.CheerioAPI): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const walk = (value: unknown, depth: number) => {
    if (depth > 6 || value === null || typeof value !== "object") return;
    if (Array.isArray(value)) {
      for (const item of value) walk(item, depth + 1);
      return;
    }
    const record = value as Record<string, unknown>;
    out.push(record);
    for (const nested of Object.values(record)) walk(nested, depth + 1);
  };
  $('script[type="application/ld+json"]').each((_, element) => {
    try {
      walk(JSON.parse($(element).text()), 0);
    } catch {
      // Invalid structured data is common; the rest of the page still counts.
    }
  });
  return out;
}

const BUSINESS_TYPES =
  /Organization|LocalBusiness|Business|Store|Restaurant|Service|Contractor|Plumber|Electrician|Dentist|Attorney|Agency|Office|Shop|Company|Corporation/i;

function stringsOf(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === "string");
  return [];
}

/** Where a link points on the same site (any `www.` variant), or null. */
function sameSiteLink(href: string, base: URL): URL | null {
  try {
    const url = new URL(href, base);
    if (url.protocol !== "http:" && url.protocol !== "https:") return null;
    const bare = (host: string) => host.replace(/^www\./, "");
    return bare(url.hostname) === bare(base.hostname) ? url : null;
  } catch {
    return null;
  }
}

/**
 * The contact details of one HTML page: `tel:` and `mailto:` links, JSON-LD (`telephone`,
 * `email`, `name`), Cloudflare-protected and commonly obfuscated addresses, and phone numbers
 * and addresses in the visible text (phones validated with libphonenumber, US by default); plus
 * links to the site's contact and about pages.
 */
export function extractContacts(html: string, pageUrl: string): PageContacts {
  const $ = cheerio.load(html);
  const base = new URL(pageUrl);
  const emails = new Ordered(10);
  const phones = new Ordered(10);
  const addEmail = (raw: string) => {
    const email = cleanEmail(raw);
    if (email) emails.add(email, email);
  };
  const addPhone = (phone: PhoneNumber | null) => {
    if (phone) phones.add(phone.number, formatPhone(phone));
  };

  let contactPage: string | null = null;
  let aboutPage: string | null = null;
  $("a[href]").each((_, element) => {
    const href = ($(element).attr("href") ?? "").trim();
    if (/^mailto:/i.test(href)) addEmail(href);
    else if (/^tel:/i.test(href)) addPhone(cleanPhone(href));
    else if (/\/cdn-cgi\/l\/email-protection#/i.test(href)) {
      const decoded = decodeCloudflareEmail(href.slice(href.indexOf("#") + 1));
      if (decoded) addEmail(decoded);
    } else {
      const label = `${href} ${$(element).text()}`.toLowerCase();
      const link = sameSiteLink(href, base);
      if (!link || link.pathname === base.pathname) return;
      if (!contactPage && /contact|get-in-touch|reach-us/.test(label))
        contactPage = link.href.split("#")[0] ?? null;
      else if (!aboutPage && /about/.test(label)) aboutPage = link.href.split("#")[0] ?? null;
    }
  });
  $("[data-cfemail]").each((_, element) => {
    const decoded = decodeCloudflareEmail($(element).attr("data-cfemail") ?? "");
    if (decoded) addEmail(decoded);
  });

  let companyName: string | null = null;
  for (const item of jsonLdObjects($)) {
    for (const email of stringsOf(item.email)) addEmail(email);
    for (const telephone of stringsOf(item.telephone)) addPhone(cleanPhone(telephone));
    const types = stringsOf(item["@type"]).join(" ");
    if (!companyName && BUSINESS_TYPES.test(types) && typeof item.name === "string" && item.name.trim()) {
      companyName = item.name.trim();
    }
  }

  $("script, style, noscript, template, svg").remove();
  const text = deobfuscate($("body").text().replace(/\s+/g, " "));
  for (const match of text.matchAll(EMAIL)) addEmail(match[0]);
  for (const found of findPhoneNumbersInText(text, "US")) addPhone(found.number);

  companyName ??=
    $('meta[property="og:site_name"]').attr("content")?.trim() ||
    $("title")
      .first()
      .text()
      .split(/\s[|\-–—:]\s/)[0]
      ?.trim() ||
    null;

  return { emails: emails.values, phones: phones.values, companyName, contactPage, aboutPage };
}
