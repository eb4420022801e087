import robotsParserModule from "robots-parser";
import { fetchPage, PageFetchError, type FetchedPage, type Outbound } from "../../outbound/index.js";
import { extractContacts, type PageContacts } from "./contacts.js";
import type { HostGate } from "./host-gate.js";

/** The parsed rules of a `robots.txt` (robots-parser's Robot). */
interface RobotsRules {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getCrawlDelay(ua?: string): number | undefined;
}

// robots-parser is CommonJS (`module.exports = function`) while its typings declare a default
// export: the default import is the function itself at run time.
const robotsParser = robotsParserModule as unknown as (url: string, contents: string) => RobotsRules;

/** How the crawler reads sites. */
export interface CrawlOptions {
  /** The name matched against `robots.txt` groups and sent as the start of the User-Agent. */
  robotsAgent: string;
  userAgent: string;
  /** Each page read (redirects included). */
  pageTimeoutMs: number;
  /** Bytes kept of each page. */
  maxPageBytes: number;
  /** Pages read per site besides `robots.txt`: the home page, then contact and about pages. */
  maxPages: number;
  /** Most `Crawl-delay` honoured (a longer one makes the site too slow to read: it is skipped). */
  maxCrawlDelayMs: number;
}

export const DEFAULT_CRAWL_OPTIONS: CrawlOptions = {
  robotsAgent: "LeadServiceBot",
  userAgent: "Mozilla/5.0 (compatible; LeadServiceBot/1.0)",
  pageTimeoutMs: 10_000,
  maxPageBytes: 1_048_576,
  maxPages: 3,
  maxCrawlDelayMs: 10_000,
};

/** What a site's pages gave. */
export interface SiteContacts {
  website: string;
  companyName: string | null;
  emails: string[];
  phones: string[];
  /** Pages read (home first). */
  pages: string[];
}

export type CrawlResult = { ok: true; contacts: SiteContacts } | { ok: false; reason: string };

function isHtml(page: FetchedPage): boolean {
  return page.contentType === undefined || /html|xml|text\/plain/i.test(page.contentType);
}

/**
 * Reads a small business's site: `robots.txt` first (honoured for every page: a page it
 * disallows is not read; an unreachable `robots.txt` with a 5xx answer means "disallow all" as
 * RFC 9309 says, a 4xx one "allow all"), then the submitted page, then its contact and about pages
 * when it links to them (else `/contact` when the home page had no contact details), each turn
 * through the host gate (the politeness delay, longer when `Crawl-delay` asks). Every read goes
 * through `fetchPage` (the outbound guard: private addresses refused, redirects checked).
 */
export async function crawlSite(
  outbound: Outbound,
  gate: HostGate,
  startUrl: string,
  options: CrawlOptions = DEFAULT_CRAWL_OPTIONS,
  signal?: AbortSignal,
): Promise<CrawlResult> {
  let start: URL;
  try {
    start = new URL(startUrl);
  } catch {
    return { ok: false, reason: "not a valid URL" };
  }
  const read = async (url: string, minDelayMs = 0): Promise<FetchedPage> => {
    await gate.wait(new URL(url).host, minDelayMs, signal);
    return fetchPage(outbound, url, {
      timeoutMs: options.pageTimeoutMs,
      maxBytes: options.maxPageBytes,
      userAgent: options.userAgent,
      signal,
    });
  };

  let allowed: (url: string) => boolean = () => true;
  let crawlDelayMs = 0;
  try {
    const robotsUrl = new URL("/robots.txt", start).href;
    const robots = await read(robotsUrl);
    if (robots.status >= 500) return { ok: false, reason: `robots.txt answered HTTP ${robots.status}` };
    if (robots.status < 300) {
      const rules = robotsParser(robotsUrl, robots.body);
      allowed = (url) => rules.isAllowed(url, options.robotsAgent) !== false;
      crawlDelayMs = (rules.getCrawlDelay(options.robotsAgent) ?? 0) * 1000;
      if (crawlDelayMs > options.maxCrawlDelayMs)
        return { ok: false, reason: "robots.txt asks for a longer crawl delay" };
    }
  } catch (err) {
    return { ok: false, reason: err instanceof PageFetchError ? err.reason : "could not be read" };
  }
  if (!allowed(start.href)) return { ok: false, reason: "disallowed by robots.txt" };

  let home: FetchedPage;
  try {
    home = await read(start.href, crawlDelayMs);
  } catch (err) {
    return { ok: false, reason: err instanceof PageFetchError ? err.reason : "could not be read" };
  }
  if (home.status >= 400) return { ok: false, reason: `HTTP ${home.status}` };
  if (!isHtml(home)) return { ok: false, reason: "not a web page" };

  const found: PageContacts[] = [extractContacts(home.body, home.finalUrl)];
  const pages = [home.finalUrl];
  const first = found[0] as PageContacts;
  const next: string[] = [];
  if (first.contactPage) next.push(first.contactPage);
  else if (first.emails.length === 0 && first.phones.length === 0)
    next.push(new URL("/contact", home.finalUrl).href);
  if (first.aboutPage) next.push(first.aboutPage);
  for (const url of next.slice(0, Math.max(0, options.maxPages - 1))) {
    if (!allowed(url) || pages.includes(url)) continue;
    try {
      const page = await read(url, crawlDelayMs);
      if (page.status < 400 && isHtml(page)) {
        found.push(extractContacts(page.body, page.finalUrl));
        pages.push(page.finalUrl);
      }
    } catch {
      // A missing contact page leaves what the home page gave.
    }
  }

  const unique = (lists: string[][]) => [...new Set(lists.flat())].slice(0, 5);
  return {
    ok: true,
    contacts: {
      website: home.finalUrl,
      companyName: found.find((f) => f.companyName)?.companyName ?? null,
      emails: unique(found.map((f) => f.emails)),
      phones: unique(found.map((f) => f.phones)),
      pages,
    },
  };
}
