import * as cheerio from "cheerio";
import { fetchPage, type Outbound } from "../outbound/index.js";

/** Text kept from a home page for the suggestion (the other inputs are at most 2,000 each). */
const WEBSITE_TEXT_MAX = 2_000;
/** A home page read: 8 seconds, 512 KiB, 5 redirects. */
const READ_TIMEOUT_MS = 8_000;
const READ_MAX_BYTES = 512 * 1024;

/** The outcome of reading a business's home page. */
export type WebsiteRead = { ok: true; text: string } | { ok: false; reason: string };

/**
 * The home page of `website` (a URL, or a bare host name read as https) as text: title, meta
 * description, headings and paragraphs, at most 2,000 characters. Read through the outbound
 * guard's page fetcher, so private, loopback, link-local and metadata addresses are refused (also
 * after redirects and DNS). Any failure (refused, unreachable, timeout, an error status, not
 * HTML, no text) is an answer, not an exception.
 */
export async function readWebsite(
  outbound: Outbound,
  website: string,
  signal?: AbortSignal,
): Promise<WebsiteRead> {
  const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(website.trim()) ? website.trim() : `https://${website.trim()}`;
  let page;
  try {
    page = await fetchPage(outbound, url, { timeoutMs: READ_TIMEOUT_MS, maxBytes: READ_MAX_BYTES, signal });
  } catch (err) {
    return { ok: false, reason: err instanceof Error ? err.message : "the page could not be read" };
  }
  if (page.status >= 400) return { ok: false, reason: `the site answered HTTP ${page.status}` };
  const type = page.contentType?.toLowerCase() ?? "text/html";
  if (!type.includes("html") && !type.startsWith("text/")) {
    return { ok: false, reason: `the page is ${type}, not HTML` };
  }
  const text = type.includes("html") ? pageText(page.body) : page.body.replace(/\s+/g, " ").trim();
  if (text.length === 0) return { ok: false, reason: "the page has no text" };
  return { ok: true, text: text.slice(0, WEBSITE_TEXT_MAX) };
}

/** Title, meta description, headings and paragraphs of an HTML page, white space collapsed. */
export function pageText(html: string): string {
  const $ = cheerio.load(html);
  $("script, style, noscript, svg, template").remove();
  const parts = [
    $("title").first().text(),
    $('meta[name="description"]').attr("content") ?? "",
    $('meta[property="og:description"]').attr("content") ?? "",
    ...$("h1, h2, h3, p, li")
      .toArray()
      .map((element) => $(element).text()),
  ];
  const seen = new Set<string>();
  const kept: string[] = [];
  for (const part of parts) {
    const text = part.replace(/\s+/g, " ").trim();
    if (text.length === 0 || seen.has(text)) continue;
    seen.add(text);
    kept.push(text);
  }
  return kept.join(". ");
}
