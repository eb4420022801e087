/** Most rows of one run after removing duplicates by host (the contract's limit). */
export const MAX_UNIQUE_URLS = 100_000;

/** One row of a new run, in submission order. */
export interface SubmittedRow {
  submittedUrl: string;
  /** The host matching and deduplication compare; null for an unusable entry (`skipped_invalid`). */
  host: string | null;
}

/** The rows of a new run and what was dropped or kept aside. */
export interface PreparedUrls {
  rows: SubmittedRow[];
  submitted: number;
  duplicatesRemoved: number;
  skippedInvalid: number;
  /** Distinct hosts (usable rows). */
  uniqueHosts: number;
}

/** Longest entry kept as submitted (a longer one is not a usable URL and is cut in the file). */
const MAX_URL_CHARS = 2_048;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * The host of a submitted website URL as matching compares it, or null when the entry is not a
 * usable website URL: http(s) (a bare `example.com/path` counts as http), no credentials, a
 * domain name of at least two labels (not an IP address or `localhost`). Lower case, without
 * `www.`, port or trailing dot; an internationalised name in punycode. Mirrors the SQL function
 * `enrichment_url_host` of the leads' URLs (migration 1120).
 */
export function websiteHost(raw: string): string | null {
  const text = raw.trim();
  if (text.length === 0 || text.length > MAX_URL_CHARS) return null;
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text.replace(/^\/\//, "")}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  if (url.username !== "" || url.password !== "") return null;
  let host = url.hostname.replace(/\.$/, "");
  if (host.startsWith("www.")) host = host.slice(4);
  const labels = host.split(".");
  if (labels.length < 2 || host.length > 253 || !labels.every((label) => LABEL.test(label))) return null;
  if (/^\d+$/.test(labels[labels.length - 1] ?? "")) return null;
  return host;
}

/** The URL a live fetch starts from: the entry as submitted, with `http://` when it had no scheme. */
export function fetchableUrl(submitted: string): string {
  const text = submitted.trim();
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text.replace(/^\/\//, "")}`;
}

/**
 * The rows of a run from the submitted list: the first entry of each host is kept (later ones are
 * duplicates and dropped); an unusable entry is kept as a `skipped_invalid` row (each one, since
 * it has no host to compare).
 */
export function prepareUrls(urls: readonly string[]): PreparedUrls {
  const seen = new Set<string>();
  const rows: SubmittedRow[] = [];
  let duplicatesRemoved = 0;
  let skippedInvalid = 0;
  for (const url of urls) {
    const host = websiteHost(url);
    if (host === null) {
      skippedInvalid += 1;
      rows.push({ submittedUrl: url.slice(0, MAX_URL_CHARS), host: null });
    } else if (seen.has(host)) {
      duplicatesRemoved += 1;
    } else {
      seen.add(host);
      rows.push({ submittedUrl: url.trim(), host });
    }
  }
  return { rows, submitted: urls.length, duplicatesRemoved, skippedInvalid, uniqueHosts: seen.size };
}
