import type { SampledLead } from "./sampling.js";

/** Words too common in business names and web addresses to be keywords of a trade. */
const STOP_WORDS = new Set([
  "www",
  "http",
  "https",
  "html",
  "index",
  "home",
  "page",
  "site",
  "website",
  "online",
  "web",
  "com",
  "net",
  "org",
  "info",
  "biz",
  "llc",
  "inc",
  "ltd",
  "corp",
  "company",
  "group",
  "the",
  "and",
  "for",
  "with",
  "your",
  "from",
  "services",
  "service",
  "solutions",
  "pros",
  "best",
  "local",
  "near",
  "usa",
  "america",
  "american",
  "united",
  "states",
  "city",
  "county",
  "shop",
  "store",
  "center",
  "centre",
  "team",
  "works",
  "studio",
  "co",
  "pllc",
]);

/** Shortest and longest word kept as a keyword candidate. */
const MIN_WORD = 4;
const MAX_WORD = 30;

/** The host of a website address without `www.` (the path says little about a trade). */
function host(website: string | null): string {
  if (!website) return "";
  return website
    .toLowerCase()
    .replace(/^[a-z]+:\/\//, "")
    .replace(/^www\./, "")
    .split(/[/?#:]/)[0]!
    .replace(/\.[a-z]+$/, "");
}

/** The candidate words of a lead: from its name, its website's host and its category names. */
export function leadWords(lead: SampledLead): Set<string> {
  const text = [lead.companyName ?? "", host(lead.website), lead.category ?? "", ...lead.aiCategories]
    .join(" ")
    .toLowerCase();
  const words = new Set<string>();
  for (const word of text.split(/[^a-z0-9]+/)) {
    if (word.length < MIN_WORD || word.length > MAX_WORD || /^\d+$/.test(word) || STOP_WORDS.has(word))
      continue;
    words.add(word);
  }
  return words;
}

/** Words by the number of leads holding them, most frequent first (ties alphabetical). */
export function frequentWords(leads: readonly SampledLead[]): { word: string; leads: number }[] {
  const counts = new Map<string, number>();
  for (const lead of leads) for (const word of leadWords(lead)) counts.set(word, (counts.get(word) ?? 0) + 1);
  return [...counts.entries()]
    .map(([word, n]) => ({ word, leads: n }))
    .sort((a, b) => b.leads - a.leads || a.word.localeCompare(b.word));
}

/** The literal parts of a keyword (`*` is a wildcard; a space separates parts in URLs). */
export function keywordParts(keyword: string): string[] {
  return keyword
    .toLowerCase()
    .split(/[*\s]+/)
    .filter((p) => p.length > 0);
}

/** Whether a word is already found by one of the keywords (a keyword's parts all in it, in order). */
export function coveredBy(word: string, keywords: readonly string[]): boolean {
  return keywords.some((keyword) => {
    let at = 0;
    for (const part of keywordParts(keyword)) {
      const found = word.indexOf(part, at);
      if (found < 0) return false;
      at = found + part.length;
    }
    return keywordParts(keyword).length > 0;
  });
}
