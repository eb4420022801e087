import type { DbOrTrx } from "../db/database.js";
import { urlHost } from "./domain.js";
import { listDomainValues } from "./repository.js";

/** The URLs of a lead that the blacklist is checked against (any may be missing). */
export interface LeadUrls {
  website?: string | null;
  registeredUrl?: string | null;
  crawledUrl?: string | null;
}

/** The normalised domains an account has blacklisted (load once per export, then test each lead). */
export async function blacklistedDomains(db: DbOrTrx, accountId: number): Promise<Set<string>> {
  return new Set(await listDomainValues(db, accountId));
}

/**
 * Whether a URL (or bare domain) is on the blacklist: its domain, or any parent domain of it, is
 * listed (`shop.example.com` is blacklisted by `example.com`; `notexample.com` is not). The URL's
 * host is read leniently (`my_shop.example.com` counts too). A missing or unparseable URL is not
 * blacklisted.
 */
export function isBlacklisted(domains: ReadonlySet<string>, url: string | null | undefined): boolean {
  if (domains.size === 0 || !url) return false;
  const host = urlHost(url);
  if (host === undefined) return false;
  const labels = host.split(".");
  // example.com and its parents with at least two labels: shop.example.com, example.com.
  for (let first = 0; first < labels.length - 1; first += 1) {
    if (domains.has(labels.slice(first).join("."))) return true;
  }
  return false;
}

/** Whether any of a lead's URLs (website, registered URL, crawled URL) is on the blacklist. */
export function isLeadBlacklisted(domains: ReadonlySet<string>, lead: LeadUrls): boolean {
  return (
    isBlacklisted(domains, lead.website) ||
    isBlacklisted(domains, lead.registeredUrl) ||
    isBlacklisted(domains, lead.crawledUrl)
  );
}
